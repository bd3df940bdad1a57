/*
 * Backprojection over several devices: the image rows are split into one share per
 * listed device (split_image_rows, in whole 32-row tile rows), each share is an ordinary
 * CUDA backprojection of its sub-grid on its device with its own stream, the pulses are
 * copied to every other device (copy_peer_async, direct: cudaMemcpyPeerAsync) and each
 * such share's rows are copied from the caller's image and back after the run (the run
 * adds into the image). A share on the caller's device works in the caller's image in
 * place when the grid is flat (its rows are then one contiguous block).
 *
 * Peer access between the caller's device and every other share's device is enabled at
 * construction where the hardware allows it (route_between): without it the driver
 * stages every peer copy through host memory, which on four GPUs cost as much as a
 * third of the run.
 *
 * Kept deliberately simple: a run first waits for the caller's stream (pulses and image
 * are ready) and returns when every share is done, so no cross-device event is needed.
 */
#include "common/cuda/cuda_check.h"
#include "sar/backprojection_backends.h"
#include <gpuradar/kernels/common/device_split.h>
#include <gpuradar/kernels/common/peer_copy.h>
#include <algorithm>
#include <memory>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::backprojection";

//! Rows [begin, end) of the full grid as a grid of their own.
image_grid sub_grid(const image_grid& g, const row_range& rows)
{
    image_grid s = g;
    s.y0 = g.y0 + double(rows.begin) * g.dy;
    s.ny = rows.rows();
    if (!g.height.empty())
        s.height.assign(g.height.begin() + rows.begin * g.nx,
                        g.height.begin() + rows.end * g.nx);
    return s;
}

class backprojection_devices final : public backprojection
{
public:
    backprojection_devices(const image_grid& g,
                           std::size_t nbins,
                           precision p,
                           stream_ref caller,
                           const std::vector<int>& devices)
        : backprojection(g, nbins, p), d_caller(caller)
    {
        GPURADAR_CUDA_CHECK(who, cudaGetDevice(&d_caller_device));
        const auto rows = split_image_rows(g.ny, devices.size(), bp_tile);
        for (std::size_t k = 0; k < devices.size(); ++k) {
            if (rows[k].rows() == 0)
                continue; // more devices than tile rows
            share sh;
            sh.device = devices[k];
            sh.rows = rows[k];
            sh.in_place = sh.device == d_caller_device && g.nz == 1;
            if (sh.device != d_caller_device) {
                route_between(d_caller_device, sh.device);
                route_between(sh.device, d_caller_device);
            }
            device_scope on(sh.device);
            sh.stream = std::make_unique<cuda_stream>();
            sh.bp = make_backprojection_cuda(
                sub_grid(g, rows[k]), nbins, p, sh.stream->ref());
            if (!sh.in_place)
                sh.image = device_memory(std::size_t(g.nx * rows[k].rows() * g.nz) *
                                         sizeof(cfloat));
            d_shares.push_back(std::move(sh));
        }
    }

    void run(const cfloat* pulses,
             const double* geometry,
             std::size_t npulses,
             cfloat* image) override
    {
        run_shares(pulses, false, geometry, npulses, image);
    }

    void run_host_pulses(const cfloat* host_pulses,
                         const double* geometry,
                         std::size_t npulses,
                         cfloat* image) override
    {
        run_shares(host_pulses, true, geometry, npulses, image);
    }

    //! Every share sees the same pulses: the largest count (they differ only if a pulse
    //! is skipped for one share's sub-grid and not another's).
    std::size_t nonfinite_samples() const override
    {
        std::size_t n = 0;
        for (const share& sh : d_shares) {
            device_scope on(sh.device);
            n = std::max(n, sh.bp->nonfinite_samples());
        }
        return n;
    }

private:
    struct share {
        int device = 0;
        row_range rows;
        std::unique_ptr<cuda_stream> stream;
        std::unique_ptr<backprojection> bp;
        bool in_place = false; // works in the caller's image (its device, a flat grid)
        device_memory image;   // nz x rows x nx on the share's device, unless in place
        device_memory pulses;  // the pulses, when the share is not on the caller's device
    };

    void peer_copy(void* dst,
                   int dst_device,
                   const void* src,
                   int src_device,
                   std::size_t bytes,
                   const share& sh)
    {
        // Direct: the driver stages through host memory itself when peer access is off.
        copy_peer_async(dst,
                        dst_device,
                        src,
                        src_device,
                        bytes,
                        peer_route::direct,
                        nullptr,
                        sh.stream->ref(),
                        who);
    }

    //! The pulses as the share's device sees them: the caller's device pulses, or a copy
    //! on the share's device.
    const cfloat* share_pulses(share& sh, const cfloat* pulses, std::size_t npulses)
    {
        if (sh.device == d_caller_device)
            return pulses;
        const std::size_t bytes = npulses * d_nbins * sizeof(cfloat);
        if (sh.pulses.size() < bytes)
            sh.pulses = device_memory(bytes);
        peer_copy(sh.pulses.get(), sh.device, pulses, d_caller_device, bytes, sh);
        return sh.pulses.as<cfloat>();
    }

    //! The share's rows of every slice: from the caller's image (in) or back (out);
    //! nothing for a share that works in place.
    void copy_rows(share& sh, cfloat* image, bool in)
    {
        if (sh.in_place)
            return;
        const std::size_t nx = std::size_t(d_grid.nx);
        const std::size_t rows = std::size_t(sh.rows.rows());
        const std::size_t bytes = rows * nx * sizeof(cfloat);
        for (long long z = 0; z < d_grid.nz; ++z) {
            cfloat* full = image + (std::size_t(z) * std::size_t(d_grid.ny) +
                                    std::size_t(sh.rows.begin)) *
                                       nx;
            cfloat* part = sh.image.as<cfloat>() + std::size_t(z) * rows * nx;
            if (in)
                peer_copy(part, sh.device, full, d_caller_device, bytes, sh);
            else
                peer_copy(full, d_caller_device, part, sh.device, bytes, sh);
        }
    }

    //! Where the share's backprojection writes: its rows of the caller's image (in
    //! place) or its own memory.
    cfloat* share_image(share& sh, cfloat* image) const
    {
        if (sh.in_place)
            return image + std::size_t(sh.rows.begin) * std::size_t(d_grid.nx);
        return sh.image.as<cfloat>();
    }

    /*!
     * run() (device pulses) and run_host_pulses() (`host`): after the caller's stream,
     * for every share with its device current, its rows copied in (unless in place), its
     * backprojection queued on its stream, its rows copied back; then waits for every
     * share (finish()).
     */
    void run_shares(const cfloat* pulses,
                    bool host,
                    const double* geometry,
                    std::size_t npulses,
                    cfloat* image)
    {
        bp_check_pointers(pulses, geometry, npulses, image);
        if (npulses == 0)
            return;
        synchronize(d_caller, who);
        for (share& sh : d_shares) {
            device_scope on(sh.device);
            copy_rows(sh, image, true);
            cfloat* part = share_image(sh, image);
            if (host)
                sh.bp->run_host_pulses(pulses, geometry, npulses, part);
            else
                sh.bp->run(share_pulses(sh, pulses, npulses), geometry, npulses, part);
            copy_rows(sh, image, false);
        }
        finish();
    }

    //! Waits for every share; the skipped count as nonfinite_samples() takes it.
    void finish()
    {
        std::size_t skipped = 0;
        for (share& sh : d_shares) {
            device_scope on(sh.device);
            sh.stream->synchronize(who);
            skipped = std::max(skipped, sh.bp->skipped_pulses());
        }
        d_skipped = skipped;
    }

    stream_ref d_caller;
    int d_caller_device = 0;
    std::vector<share> d_shares;
};

} // namespace

std::unique_ptr<backprojection>
make_backprojection_on_devices(const image_grid& g,
                               std::size_t nbins,
                               backprojection::precision p,
                               stream_ref s,
                               const std::vector<int>& devices)
{
    const int count = cuda_device_count();
    for (int d : devices)
        check_device_index("backprojection", d, count);
    if (devices.size() > 1)
        return std::make_unique<backprojection_devices>(g, nbins, p, s, devices);
    device_scope on(devices.at(0));
    return make_backprojection_cuda(g, nbins, p, s);
}

} // namespace gpuradar::kernels::detail
