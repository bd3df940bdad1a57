/* Helpers of the CPU pool tests: the thread count restored at the end of a test (bitwise
 * comparison, test_support.h: the pool must not change a single bit of any output). */
#ifndef INCLUDED_GPURADAR_CPU_THREADS_SUPPORT_H
#define INCLUDED_GPURADAR_CPU_THREADS_SUPPORT_H

#include "test_support.h"
#include <gpuradar/kernels/common/cpu_threads.h>
#include <vector>

namespace gpuradar::test {

//! Restores the count a test found when it ends.
struct thread_count_guard {
    const int saved = kernels::cpu_threads();
    ~thread_count_guard() { kernels::set_cpu_threads(saved); }
};

//! Thread counts the pool tests run at: 1 (the reference), counts that divide few row
//! numbers (3, 7), and more threads than this machine may have.
inline const std::vector<int>& pool_test_counts()
{
    static const std::vector<int> counts = { 1, 2, 3, 4, 7 };
    return counts;
}

} // namespace gpuradar::test

#endif
