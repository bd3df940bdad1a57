/*
 * CUDA beamformer: one cuBLAS strided-batched complex GEMM. In column-major terms an
 * item's channel-major block is X (nsamples x nchannels, leading dimension nsamples) and
 * its beam-major output Y (nsamples x nbeams); the row-major nbeams x nchannels weights
 * read column-major are W^T (nchannels x nbeams), so Y = X W^T with W shared by every
 * item (stride 0). Long, thin products like this one are bandwidth-bound: each sample is
 * read once and each beam sample written once (gpuradar_bench "beamformer/PD").
 */
#include "../beamformer_backends.h"
#include "../param_check.h"
#include "cublas_handle.h"
#include "cuda_check.h"
#include <algorithm>
#include <climits>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "beamformer";

class beamformer_cuda final : public beamformer
{
public:
    beamformer_cuda(const beamformer_shape& shape,
                    const std::vector<cfloat>& weights,
                    stream_ref s)
        : d_shape(shape),
          d_stream(native(s)),
          d_cublas(d_stream, who),
          d_weights(weights.size() * sizeof(cfloat))
    {
        copy_async(d_weights.get(),
                   weights.data(),
                   d_weights.size(),
                   copy_kind::host_to_device,
                   s,
                   who);
        // The host weights may die once make() returns.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
    }

    void run(const cfloat* in, cfloat* out, std::size_t nitems) override
    {
        // cuBLAS counts batches in int: very long calls go in slices.
        constexpr std::size_t max_batch = INT_MAX;
        for (std::size_t done = 0; done < nitems; done += max_batch)
            gemm(in + done * d_shape.nchannels * d_shape.nsamples,
                 out + done * d_shape.nbeams * d_shape.nsamples,
                 std::min(max_batch, nitems - done));
    }

private:
    void gemm(const cfloat* in, cfloat* out, std::size_t batch)
    {
        const cuComplex one = make_cuComplex(1.0f, 0.0f);
        const cuComplex zero = make_cuComplex(0.0f, 0.0f);
        const int ns = static_cast<int>(d_shape.nsamples);
        const int nb = static_cast<int>(d_shape.nbeams);
        const int nc = static_cast<int>(d_shape.nchannels);
        GPURADAR_CUBLAS_CHECK(
            who,
            cublasCgemmStridedBatched(d_cublas.get(),
                                      CUBLAS_OP_N,
                                      CUBLAS_OP_N,
                                      ns,
                                      nb,
                                      nc,
                                      &one,
                                      reinterpret_cast<const cuComplex*>(in),
                                      ns,
                                      static_cast<long long>(nc) * ns,
                                      d_weights.as<const cuComplex>(),
                                      nc,
                                      0,
                                      &zero,
                                      reinterpret_cast<cuComplex*>(out),
                                      ns,
                                      static_cast<long long>(nb) * ns,
                                      static_cast<int>(batch)));
    }

    const beamformer_shape d_shape;
    const cudaStream_t d_stream;
    cublas_handle d_cublas;
    device_memory d_weights;
};

} // namespace

std::unique_ptr<beamformer> make_beamformer_cuda(const beamformer_shape& shape,
                                                 const std::vector<cfloat>& weights,
                                                 stream_ref s)
{
    if (shape.nsamples > INT_MAX || shape.nchannels > INT_MAX || shape.nbeams > INT_MAX)
        throw_invalid(who, "nsamples", "<= INT_MAX (cuBLAS dimensions)", shape.nsamples);
    return std::make_unique<beamformer_cuda>(shape, weights, s);
}

} // namespace gpuradar::kernels::detail
