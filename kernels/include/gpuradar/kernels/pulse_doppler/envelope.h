/* Envelope detection: complex samples to power or magnitude, optionally in dB. */
#ifndef INCLUDED_GPURADAR_KERNELS_ENVELOPE_H
#define INCLUDED_GPURADAR_KERNELS_ENVELOPE_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>
#include <memory>
#include <string>

namespace gpuradar::kernels {

/*!
 * \brief Envelope detector, y[n] = f(x[n]).
 *
 * - square_law: y = |x|^2 (power; what CFAR expects), dB: 10*log10(|x|^2)
 * - linear:     y = |x|,   dB: 20*log10(|x|)
 * Both dB forms give the same number for the same sample; |x| = 0 gives -inf dB.
 * NaN in gives NaN out; nothing throws on data.
 */
class envelope
{
public:
    enum class mode { square_law, linear };

    //! Parses "square_law" | "linear"; throws std::invalid_argument naming `mode`.
    static mode parse_mode(const std::string& name);
    static const char* to_string(mode m);

    /*!
     * \param b   backend; the CUDA one queues its kernels on `stream` and does not wait.
     * \param m   square law or linear
     * \param db  convert to decibels
     */
    static std::unique_ptr<envelope>
    make(backend b, mode m, bool db, stream_ref stream = stream_ref());

    virtual ~envelope() = default;

    /*!
     * Process n samples. On the CUDA backend `in` and `out` are device pointers and the
     * call returns once the work is queued; on the CPU backend they are host pointers.
     */
    virtual void run(const cfloat* in, float* out, std::size_t n) = 0;

    bool db() const { return d_db; }

protected:
    envelope(mode m, bool db) : d_mode(m), d_db(db) {}
    const mode d_mode;
    const bool d_db;
};

} // namespace gpuradar::kernels

#endif
