/*
 * CUDA beamformer. Two implementations, chosen at construction by one rule:
 *  - nbeams <= 16 and nchannels <= 256 (any array a GNU Radio front end feeds, and every
 *    fan of up to 16 beams): beamform_rows, one thread per sample position of an item,
 *    its <= 16 beam sums in registers and the weights in shared memory. Each channel
 *    sample is read once and each beam sample written once, so it runs at the
 *    bandwidth floor (gpuradar_bench "beamformer/PD"). sc16 / sc8 input (run_samples)
 *    is converted in its loads (sample_convert.cuh): no conversion pass;
 *  - otherwise one cuBLAS strided-batched complex GEMM. In column-major terms an item's
 *    channel-major block is X (nsamples x nchannels, leading dimension nsamples) and its
 *    beam-major output Y (nsamples x nbeams); the row-major nbeams x nchannels weights
 *    read column-major are W^T (nchannels x nbeams), so Y = X W^T with W shared by
 *    every item (stride 0). With many beams the product stops being thin and a tiled
 *    GEMM reuses each loaded sample across beam tiles, which the register kernel cannot.
 *    sc16 / sc8 input goes through the base class's conversion pass first (cuBLAS reads
 *    complex float).
 */
#include "array/beamformer_backends.h"
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cublas_handle.h"
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "common/cuda/sample_convert.cuh"
#include "common/param_check.h"
#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "beamformer";

//! The register kernel's limits (see the top of this file).
constexpr std::size_t register_max_beams = 16, register_max_channels = 256;

bool use_register_kernel(const beamformer_shape& shape)
{
    return shape.nbeams <= register_max_beams && shape.nchannels <= register_max_channels;
}

//! acc[b] += w[c][b] v for b < NB; wc: channel c's NB weights as NB / 2 float4 pairs.
template <int NB>
__device__ __forceinline__ void beam_mac(float2 (&acc)[NB], float2 v, const float4* wc)
{
#pragma unroll
    for (int p = 0; p < NB / 2; ++p) {
        const float4 w = wc[p];
        cmac(acc[2 * p], make_float2(w.x, w.y), v);
        cmac(acc[2 * p + 1], make_float2(w.z, w.w), v);
    }
}

/*
 * y[i][b][s] = sum_c w[c][b] x[i][c][s]: threads over s (coalesced loads and stores),
 * items over blockIdx.y (grid-stride). `w` is nchannels x NB (beams past nbeams are
 * zero), copied to shared memory once per block; the channel loop issues eight loads
 * before their products so that several are in flight per thread.
 */
template <int NB, typename In>
__global__ void __launch_bounds__(elementwise_threads)
    beamform_rows(const In* __restrict__ x,
                  float2* __restrict__ y,
                  const float4* __restrict__ w,
                  unsigned nchannels,
                  unsigned nbeams,
                  std::size_t nsamples,
                  std::size_t nitems)
{
    extern __shared__ float4 ws[];
    for (unsigned i = threadIdx.x; i < nchannels * (NB / 2); i += blockDim.x)
        ws[i] = w[i];
    __syncthreads();
    constexpr unsigned chunk = 8;
    for (std::size_t item = blockIdx.y; item < nitems; item += gridDim.y) {
        const In* xi = x + item * nchannels * nsamples;
        float2* yi = y + item * nbeams * nsamples;
        for (std::size_t s = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
             s < nsamples;
             s += std::size_t(gridDim.x) * blockDim.x) {
            float2 acc[NB];
#pragma unroll
            for (int b = 0; b < NB; ++b)
                acc[b] = make_float2(0.0f, 0.0f);
            unsigned c = 0;
            for (; c + chunk <= nchannels; c += chunk) {
                float2 v[chunk];
#pragma unroll
                for (unsigned j = 0; j < chunk; ++j)
                    v[j] = sample_to_float2(__ldcs(xi + (c + j) * nsamples + s));
#pragma unroll
                for (unsigned j = 0; j < chunk; ++j)
                    beam_mac<NB>(acc, v[j], ws + (c + j) * (NB / 2));
            }
            for (; c < nchannels; ++c)
                beam_mac<NB>(acc,
                             sample_to_float2(__ldcs(xi + c * nsamples + s)),
                             ws + c * (NB / 2));
#pragma unroll
            for (int b = 0; b < NB; ++b)
                if (b < int(nbeams))
                    __stcs(yi + b * nsamples + s, acc[b]);
        }
    }
}

//! The register kernel's beam count: nbeams rounded up to 4, 8 or 16.
unsigned padded_beams(std::size_t nbeams)
{
    return nbeams <= 4 ? 4 : nbeams <= 8 ? 8 : 16;
}

//! w[c][b] = W[b][c] for b < nbeams, 0 up to padded_beams (the register kernel's layout).
std::vector<cfloat> channel_major_weights(const beamformer_shape& shape,
                                          const std::vector<cfloat>& weights)
{
    const std::size_t nbp = padded_beams(shape.nbeams);
    std::vector<cfloat> w(shape.nchannels * nbp, cfloat(0.0f, 0.0f));
    for (std::size_t b = 0; b < shape.nbeams; ++b)
        for (std::size_t c = 0; c < shape.nchannels; ++c)
            w[c * nbp + b] = weights[b * shape.nchannels + c];
    return w;
}

class beamformer_cuda final : public beamformer
{
public:
    beamformer_cuda(const beamformer_shape& shape,
                    const std::vector<cfloat>& weights,
                    stream_ref s)
        : d_shape(shape), d_stream(native(s)), d_register(use_register_kernel(shape))
    {
        const auto w = d_register ? channel_major_weights(shape, weights) : weights;
        d_weights = device_memory(w.size() * sizeof(cfloat));
        copy_async(d_weights.get(),
                   w.data(),
                   d_weights.size(),
                   copy_kind::host_to_device,
                   s,
                   who);
        if (!d_register)
            d_cublas.emplace(d_stream, who);
        // The host weights may die once make() returns.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
    }

    void run(const cfloat* in, cfloat* out, std::size_t nitems) override
    {
        if (nitems == 0)
            return;
        if (d_register) {
            run_register(reinterpret_cast<const float2*>(in), out, nitems);
            return;
        }
        // cuBLAS counts batches in int: very long calls go in slices.
        constexpr std::size_t max_batch = INT_MAX;
        for (std::size_t done = 0; done < nitems; done += max_batch)
            gemm(in + done * d_shape.nchannels * d_shape.nsamples,
                 out + done * d_shape.nbeams * d_shape.nsamples,
                 std::min(max_batch, nitems - done));
    }

    //! The register kernel converts sc16 / sc8 in its loads; cuBLAS takes the base
    //! class's conversion pass.
    void run_samples(const void* in, cfloat* out, std::size_t nitems) override
    {
        if (!d_register || nitems == 0 || input_format() == sample_format::fc32) {
            beamformer::run_samples(in, out, nitems);
            return;
        }
        if (reinterpret_cast<std::uintptr_t>(in) % sample_bytes(input_format()) != 0)
            throw_invalid(who,
                          "run_samples input",
                          "aligned to one " +
                              std::string(kernels::to_string(input_format())) +
                              " sample (" + std::to_string(sample_bytes(input_format())) +
                              " bytes)",
                          reinterpret_cast<std::uintptr_t>(in));
        if (input_format() == sample_format::sc16)
            run_register(static_cast<const short2*>(in), out, nitems);
        else
            run_register(static_cast<const char2*>(in), out, nitems);
    }

protected:
    bool converts_on_load() const override { return d_register; }

private:
    template <typename In>
    void run_register(const In* in, cfloat* out, std::size_t nitems)
    {
        const unsigned nbp = padded_beams(d_shape.nbeams);
        const std::size_t smem = d_shape.nchannels * nbp * sizeof(cfloat);
        const dim3 grid(
            static_cast<unsigned>(std::min<std::size_t>(
                (d_shape.nsamples + elementwise_threads - 1) / elementwise_threads,
                elementwise_max_blocks)),
            static_cast<unsigned>(std::min<std::size_t>(nitems, 65535)));
        auto kernel = nbp == 4   ? beamform_rows<4, In>
                      : nbp == 8 ? beamform_rows<8, In>
                                 : beamform_rows<16, In>;
        kernel<<<grid, elementwise_threads, smem, d_stream>>>(
            in,
            reinterpret_cast<float2*>(out),
            d_weights.as<const float4>(),
            static_cast<unsigned>(d_shape.nchannels),
            static_cast<unsigned>(d_shape.nbeams),
            d_shape.nsamples,
            nitems);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "beamform_rows");
    }

    void gemm(const cfloat* in, cfloat* out, std::size_t batch)
    {
        const cuComplex one = make_cuComplex(1.0f, 0.0f);
        const cuComplex zero = make_cuComplex(0.0f, 0.0f);
        const int ns = static_cast<int>(d_shape.nsamples);
        const int nb = static_cast<int>(d_shape.nbeams);
        const int nc = static_cast<int>(d_shape.nchannels);
        GPURADAR_CUBLAS_CHECK(
            who,
            cublasCgemmStridedBatched(d_cublas->get(),
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
    const bool d_register; //!< beamform_rows (else cuBLAS)
    std::optional<cublas_handle> d_cublas;
    device_memory d_weights;
};

} // namespace

std::unique_ptr<beamformer> make_beamformer_cuda(const beamformer_shape& shape,
                                                 const std::vector<cfloat>& weights,
                                                 stream_ref s)
{
    if (!use_register_kernel(shape) &&
        (shape.nsamples > INT_MAX || shape.nchannels > INT_MAX || shape.nbeams > INT_MAX))
        throw_invalid(who, "nsamples", "<= INT_MAX (cuBLAS dimensions)", shape.nsamples);
    return std::make_unique<beamformer_cuda>(shape, weights, s);
}

} // namespace gpuradar::kernels::detail
