/* The threads the CPU backend's stages split their rows over (one pool per process). */
#ifndef INCLUDED_GPURADAR_KERNELS_CPU_THREADS_H
#define INCLUDED_GPURADAR_KERNELS_CPU_THREADS_H

namespace gpuradar::kernels {

//! The most threads set_cpu_threads accepts.
constexpr int max_cpu_threads = 256;

/*!
 * \brief Threads for the CPU backend's row loops, the calling thread included.
 *
 * One pool serves every CPU stage of the process: a stage splits one call's rows (pulses,
 * range rows, Doppler rows) into chunks that the caller and the pool's workers take in
 * turn, so one CPI uses up to cpu_threads() cores. Each row is computed exactly as on
 * one thread, so the output does not depend on the count. Default: cpu_cores() when the
 * pool is first used (at most max_cpu_threads), so a process pinned to two cores
 * (taskset, a container's cpuset) gets two; on a one-core machine, 1: no worker threads,
 * every stage runs on its caller's thread. GNU Radio runs each block in its own thread;
 * with several CPU blocks busy at once they share the pool, so the busy threads stay near
 * cpu_threads() plus the blocks' own threads.
 *
 * \param n  1 .. max_cpu_threads; 1 runs every stage on its caller's thread. Throws
 *           std::invalid_argument naming cpu_threads otherwise, before anything changes.
 *           A count above cpu_cores() is kept as asked (the threads then take turns on
 *           the cores: no faster, the same output) and one line on stderr says so. Takes
 *           effect for stages made afterwards and for the next call of existing ones; set
 *           it before a flowgraph starts.
 */
void set_cpu_threads(int n);

//! The current thread count (set_cpu_threads, or the default).
int cpu_threads();

/*!
 * The cores this process may run on: its CPU affinity mask (Linux), else
 * std::thread::hardware_concurrency; at least 1. Read afresh at each call.
 */
int cpu_cores();

} // namespace gpuradar::kernels

#endif
