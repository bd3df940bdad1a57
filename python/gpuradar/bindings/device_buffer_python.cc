/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/device_buffer.h>
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cpu_threads.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_device_buffer(py::module& m)
{
    using gr::gpuradar::device_buffer;
    m.def(
        "transfer_stats",
        [] {
            const auto s = device_buffer::transfer_stats();
            py::dict d;
            d["h2d_bytes"] = s.h2d_bytes;
            d["d2h_bytes"] = s.d2h_bytes;
            d["d2d_bytes"] = s.d2d_bytes;
            d["peer_bytes"] = s.peer_bytes;
            return d;
        },
        "Bytes moved by every device_buffer since the last reset: dict with h2d_bytes, "
        "d2h_bytes, d2d_bytes, peer_bytes (edges between blocks on different devices).");
    m.def("reset_transfer_stats",
          &device_buffer::reset_transfer_stats,
          "Zero the device_buffer byte counters.");
    m.def("cuda_available",
          &gpuradar::kernels::cuda_available,
          "True when a usable CUDA device exists (what backend='auto' checks).");
    m.def("cuda_unavailable_reason",
          &gpuradar::kernels::cuda_unavailable_reason,
          "Why cuda_available() is False ('' when it is True).");
    m.def("set_cpu_threads",
          &gpuradar::kernels::set_cpu_threads,
          py::arg("n"),
          "Threads (1..256, the caller included) that the CPU backend's stages share "
          "each CPI's rows over; one pool per process, the output the same at any count. "
          "Default: cpu_cores() (1 on a one-core machine: every stage on its caller's "
          "thread). n < 1 or n > 256: ValueError naming cpu_threads, nothing changed. "
          "n > cpu_cores(): kept as asked, one line on stderr (the threads take turns "
          "on the cores). Set it before a flowgraph starts.");
    m.def("cpu_threads",
          &gpuradar::kernels::cpu_threads,
          "The CPU backend's thread count (set_cpu_threads, or cpu_cores()).");
    m.def("cpu_cores",
          &gpuradar::kernels::cpu_cores,
          "The cores this process may run on (its CPU affinity mask), at least 1.");
}
