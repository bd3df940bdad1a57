/*
 * CUDA backprojection, host side: the backend object (device buffers, the pulse records'
 * upload, run_host_pulses' double-buffered copies) and the launches, which choose the
 * arithmetic (arith_of), the pulses per block step from the shared memory a tile's
 * window needs, and the kernel instance for (arith, series terms, height map). The
 * kernels are in backprojection_cuda_kernels.cuh, their maths in
 * backprojection_cuda_maths.cuh.
 */
#include "common/cuda/cuda_check.h"
#include "common/param_check.h"
#include "sar/backprojection_backends.h"
#include "sar/cuda/backprojection_cuda_kernels.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

using namespace bp_cuda;

constexpr const char* who = "gpuradar::backprojection";

//! Pulses per host-to-device block in run_host_pulses: ~16 MiB per copy.
constexpr std::size_t stream_block_bytes = 16u << 20;

//! Tile rows a launch can take (gridDim.y).
constexpr long long max_tile_rows = 65535;

class backprojection_cuda final : public bp_backend
{
public:
    backprojection_cuda(const image_grid& g, std::size_t nbins, precision p, stream_ref s)
        : bp_backend(g, nbins, p), d_stream(native(s))
    {
        d_counter = device_memory(sizeof(unsigned long long));
        d_found = device_memory(sizeof(unsigned));
        fill_bytes_async(d_counter.get(), 0, d_counter.size(), s, who);
        d_counter_host = pinned_memory(sizeof(unsigned long long));
        int dev = 0;
        GPURADAR_CUDA_CHECK(who, cudaGetDevice(&dev));
        GPURADAR_CUDA_CHECK(
            who,
            cudaDeviceGetAttribute(
                &d_smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        GPURADAR_CUDA_CHECK(
            who,
            cudaDeviceGetAttribute(
                &d_smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
        GPURADAR_CUDA_CHECK(
            who,
            cudaDeviceGetAttribute(
                &d_smem_reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
        if (d_layout.has_height) {
            d_tile_z = device_memory(d_layout.tile_z.size() * sizeof(double));
            copy_async(d_tile_z.get(),
                       d_layout.tile_z.data(),
                       d_tile_z.size(),
                       copy_kind::host_to_device,
                       s,
                       who);
            if (p == precision::accurate) {
                d_dz = device_memory(d_layout.dz.size() * sizeof(double));
                copy_async(d_dz.get(),
                           d_layout.dz.data(),
                           d_dz.size(),
                           copy_kind::host_to_device,
                           s,
                           who);
            } else {
                std::vector<float> dzf(d_layout.dz.begin(), d_layout.dz.end());
                d_dz = device_memory(dzf.size() * sizeof(float));
                copy_async(d_dz.get(),
                           dzf.data(),
                           d_dz.size(),
                           copy_kind::host_to_device,
                           s,
                           who);
            }
            // The host vectors above are pageable: finish before they go away.
            GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        }
    }

    void run(const cfloat* pulses,
             const double* geometry,
             std::size_t npulses,
             cfloat* image) override
    {
        bp_prepared prep;
        if (!begin_run(pulses, geometry, npulses, image, prep))
            return;
        upload_records(prep.pulses);
        launch(pulses, 0, int(prep.pulses.size()), 0, prep, image);
    }

    std::size_t nonfinite_samples() const override
    {
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(d_counter_host.get(),
                                            d_counter.get(),
                                            sizeof(unsigned long long),
                                            cudaMemcpyDeviceToHost,
                                            d_stream));
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        return std::size_t(*d_counter_host.as<unsigned long long>());
    }

    void nonfinite_samples_async(std::uint64_t* count) const override
    {
        static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long),
                      "the device counter is copied as it is");
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(count,
                                            d_counter.get(),
                                            sizeof(std::uint64_t),
                                            cudaMemcpyDeviceToHost,
                                            d_stream));
    }

    void run_host_pulses(const cfloat* host_pulses,
                         const double* geometry,
                         std::size_t npulses,
                         cfloat* image) override
    {
        bp_prepared prep;
        if (!begin_run(host_pulses, geometry, npulses, image, prep))
            return;
        upload_records(prep.pulses);
        const std::size_t pulse_bytes = d_nbins * sizeof(cfloat);
        const std::size_t block =
            std::max<std::size_t>(1, stream_block_bytes / pulse_bytes);
        if (!d_copy_stream) {
            d_copy_stream.emplace();
            for (int i = 0; i < 2; ++i) {
                d_stage[i] = device_memory(block * pulse_bytes);
                d_copied[i].emplace();
                d_consumed[i].emplace();
                d_staged[i].emplace();
            }
            d_block = block;
        }
        cudaPointerAttributes attr{};
        const bool pinned = cudaPointerGetAttributes(&attr, host_pulses) == cudaSuccess &&
                            attr.type == cudaMemoryTypeHost;
        cudaGetLastError(); // pageable memory may leave an error from the query
        if (!pinned && d_pinned_stage[0].size() == 0)
            for (auto& b : d_pinned_stage)
                b = pinned_memory(d_block * pulse_bytes);
        const cudaStream_t cs = native(d_copy_stream->ref());
        std::size_t rec = 0;
        int slot = 0;
        for (std::size_t first = 0; first < npulses; first += d_block, slot ^= 1) {
            const std::size_t n = std::min(d_block, npulses - first);
            // Kernels of this slot's previous block must be done with its device buffer.
            d_consumed[slot]->make_stream_wait(d_copy_stream->ref());
            const void* src = host_pulses + first * d_nbins;
            if (!pinned) {
                // The previous copy out of this pinned buffer must be done before
                // refilling.
                d_staged[slot]->synchronize();
                std::memcpy(d_pinned_stage[slot].get(), src, n * pulse_bytes);
                src = d_pinned_stage[slot].get();
            }
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpyAsync(d_stage[slot].get(),
                                                src,
                                                n * pulse_bytes,
                                                cudaMemcpyHostToDevice,
                                                cs));
            d_staged[slot]->record(d_copy_stream->ref());
            d_copied[slot]->record(d_copy_stream->ref());
            // The records are sorted by pulse index: those of this block are contiguous.
            std::size_t end = rec;
            while (end < prep.pulses.size() &&
                   std::size_t(prep.pulses[end].index) < first + n)
                ++end;
            d_copied[slot]->make_stream_wait(stream_ref(d_stream));
            if (end > rec)
                launch(d_stage[slot].as<cfloat>(),
                       rec,
                       int(end - rec),
                       int(first),
                       prep,
                       image);
            d_consumed[slot]->record(stream_ref(d_stream));
            rec = end;
        }
        // The caller's (pinned) buffer is read asynchronously: return once it is copied.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(cs));
    }

private:
    void upload_records(const std::vector<bp_pulse>& recs)
    {
        const std::size_t bytes = recs.size() * sizeof(bp_pulse);
        if (d_records_host.size() < bytes) {
            // Grow (rare): the old buffers may still be read by queued work.
            GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
            d_records_host = pinned_memory(bytes);
            d_records = device_memory(bytes);
        } else if (d_records_pending) {
            // The previous copy out of the pinned buffer must be done before refilling.
            d_records_copied.synchronize();
        }
        std::memcpy(d_records_host.get(), recs.data(), bytes);
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(d_records.get(),
                                            d_records_host.get(),
                                            bytes,
                                            cudaMemcpyHostToDevice,
                                            d_stream));
        d_records_copied.record(stream_ref(d_stream));
        d_records_pending = true;
    }

    //! One launch of the backprojection kernel.
    struct launch_args {
        const cfloat* pulses;
        const bp_pulse* recs;
        int nrec, index_base, step, width;
        std::size_t smem;
        cfloat* image;
    };

    template <arith Arith, int SeriesTerms, bool HeightMap>
    void launch_one(const launch_args& a)
    {
        constexpr int px = px_per_thread;
        constexpr bool dz_double = Arith == arith::double_range;
        auto kernel = backproject<Arith, SeriesTerms, HeightMap, px>;
        if (a.smem > 48 * 1024)
            GPURADAR_CUDA_CHECK(
                who,
                cudaFuncSetAttribute(
                    kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(a.smem)));
        grid_params gp;
        gp.x0 = d_grid.x0;
        gp.y0 = d_grid.y0;
        gp.dx = d_grid.dx;
        gp.dy = d_grid.dy;
        gp.z = d_layout.z;
        gp.slice_dz = d_grid.dz;
        gp.hx = d_layout.hx;
        gp.hy = d_layout.hy;
        gp.hz = d_layout.hz;
        gp.hd = d_layout.hd;
        gp.row_dy = (bp_tile / px) * d_grid.dy;
        gp.slice_pixels = std::size_t(d_grid.nx) * std::size_t(d_grid.ny);
        gp.nx = int(d_grid.nx);
        gp.ny = int(d_grid.ny);
        gp.ntx = int(d_layout.ntx);
        gp.tile_z = d_tile_z.as<double>();
        gp.dz_f = dz_double ? nullptr : d_dz.as<float>();
        gp.dz_d = dz_double ? d_dz.as<double>() : nullptr;
        const dim3 grid(
            unsigned(d_layout.ntx), unsigned(d_layout.nty), unsigned(d_grid.nz));
        kernel<<<grid, bp_tile * bp_tile / px, a.smem, d_stream>>>(
            reinterpret_cast<const float2*>(a.pulses),
            int(d_nbins),
            a.recs,
            a.nrec,
            a.index_base,
            a.step,
            a.width,
            gp,
            d_found.as<unsigned>(),
            reinterpret_cast<float2*>(a.image));
        GPURADAR_CUDA_CHECK_LAUNCH(who, "backproject");
    }

    template <arith Arith, bool HeightMap>
    void launch_terms(int terms, const launch_args& a)
    {
        switch (terms) {
        case 2:
            return launch_one<Arith, 2, HeightMap>(a);
        case 4:
            return launch_one<Arith, 4, HeightMap>(a);
        default: // the exact formula; never fixed_phase (arith_of)
            if constexpr (Arith != arith::fixed_phase)
                return launch_one<Arith, 0, HeightMap>(a);
        }
    }

    //! The arithmetic of a run (arith): fixed_phase where its conditions hold.
    arith arith_of(const bp_prepared& prep) const
    {
        if (d_precision != precision::accurate)
            return arith::single;
        const bool fixed = prep.series_terms > 0 && !d_layout.has_height &&
                           prep.bend_turns <= bp_float_bend_max_turns;
        return fixed ? arith::fixed_phase : arith::double_range;
    }

    /*!
     * Backprojects records [first_rec, first_rec + nrec) of the uploaded records, whose
     * pulses start at pulse index_base of `pulses`: the non-finite pre-pass, then the
     * kernel.
     */
    void launch(const cfloat* pulses,
                std::size_t first_rec,
                int nrec,
                int index_base,
                const bp_prepared& prep,
                cfloat* image)
    {
        const arith ar = arith_of(prep);
        const long long width = 2LL * prep.max_half + 1;
        const long long per_pulse =
            (long long)consts_bytes(ar) + width * (long long)sizeof(float4);
        if (per_pulse > d_smem_optin)
            throw cuda_error(
                std::string(who) + ": a 32x32-pixel tile reaches " +
                std::to_string(width) +
                " range bins per pulse (pixel spacing far "
                "larger than the bin spacing), more than fit in shared memory; "
                "use the CPU backend or a finer pixel grid");
        // As many pulses a step as let min_blocks blocks share an SM.
        const long long target =
            d_smem_sm / min_blocks(ar, d_layout.has_height) - d_smem_reserved;
        const int step = int(std::clamp<long long>(
            target / per_pulse,
            1,
            std::min<long long>(max_pulses_per_step, d_smem_optin / per_pulse)));
        launch_args a;
        a.pulses = pulses;
        a.recs = d_records.as<bp_pulse>() + first_rec;
        a.nrec = nrec;
        a.index_base = index_base;
        a.step = step;
        a.width = int(width);
        a.smem = std::size_t(step) * std::size_t(per_pulse);
        a.image = image;
        fill_bytes_async(d_found.get(), 0, d_found.size(), stream_ref(d_stream), who);
        count_nonfinite<<<unsigned(nrec), 256, 0, d_stream>>>(
            reinterpret_cast<const float2*>(pulses),
            int(d_nbins),
            a.recs,
            index_base,
            d_counter.as<unsigned long long>(),
            d_found.as<unsigned>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "count_nonfinite");
        // The launch_terms instance for (arithmetic, has height); fixed_phase is flat.
        using launcher = void (backprojection_cuda::*)(int, const launch_args&);
        static constexpr launcher launchers[3][2] = {
            { &backprojection_cuda::launch_terms<arith::single, false>,
              &backprojection_cuda::launch_terms<arith::single, true> },
            { &backprojection_cuda::launch_terms<arith::fixed_phase, false>, nullptr },
            { &backprojection_cuda::launch_terms<arith::double_range, false>,
              &backprojection_cuda::launch_terms<arith::double_range, true> }
        };
        (this->*launchers[int(ar)][d_layout.has_height])(prep.series_terms, a);
    }

    const cudaStream_t d_stream;
    int d_smem_optin = 48 * 1024;
    int d_smem_sm = 0, d_smem_reserved = 0; // per SM; reserved per block
    device_memory d_tile_z, d_dz;
    // Non-finite samples counted on the device since construction; its host copy.
    device_memory d_counter;
    mutable pinned_memory d_counter_host;
    device_memory d_found; //!< set by a launch's pre-pass when its pulses have one
    pinned_memory d_records_host;
    device_memory d_records;
    cuda_event d_records_copied;
    bool d_records_pending = false;
    // run_host_pulses: a copy stream and two device/pinned buffers used in turn.
    std::optional<cuda_stream> d_copy_stream;
    std::size_t d_block = 0;
    device_memory d_stage[2];
    pinned_memory d_pinned_stage[2];
    std::optional<cuda_event> d_copied[2], d_consumed[2], d_staged[2];
};

} // namespace

std::unique_ptr<backprojection> make_backprojection_cuda(const image_grid& g,
                                                         std::size_t nbins,
                                                         backprojection::precision p,
                                                         stream_ref s)
{
    // Before anything is made: tile rows are a grid dimension.
    if ((g.ny + bp_tile - 1) / bp_tile > max_tile_rows)
        throw_invalid(
            "backprojection", "ny", "at most 65535 x 32 = 2097120 rows on CUDA", g.ny);
    return std::make_unique<backprojection_cuda>(g, nbins, p, s);
}

} // namespace gpuradar::kernels::detail
