/*
 * Phase-gradient autofocus: the CPU twin against an fp64 reference of the same steps
 * (naive DFTs); on images with an injected phase error the focus comes back (IRW, PSLR,
 * entropy) and the estimated error matches the injected one; images without point-like
 * content or with a NaN come back unchanged; parameters refused by name; CUDA against
 * the CPU twin.
 */
#include "test_support.h"
#include <gpuradar/kernels/sar/autofocus.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace gpuradar::test {
namespace {

using kernels::autofocus;
using cd = std::complex<double>;
constexpr double pi = 3.14159265358979323846;

//! Unnormalised DFT of one row, sign -1 (forward) or +1 (inverse), in double.
std::vector<cd> dft(const std::vector<cd>& x, int sign)
{
    const std::size_t n = x.size();
    std::vector<cd> y(n);
    for (std::size_t k = 0; k < n; ++k) {
        cd s = 0;
        for (std::size_t t = 0; t < n; ++t)
            s +=
                x[t] * std::polar(1.0, sign * 2.0 * pi * double((k * t) % n) / double(n));
        y[k] = s;
    }
    return y;
}

struct scene {
    std::size_t nrange, naz;
    std::vector<cfloat> clean, blurred; // images without and with the phase error
    std::vector<double> error;          // the injected phase error per pulse
    std::size_t bright_row;             // the row of the strongest target
};

//! Point targets on integer azimuth bins of some rows, noise everywhere, the image the
//! DFT of the pulses; the blurred one with exp(j error[n]) on every pulse.
scene make_scene(std::size_t nrange,
                 std::size_t naz,
                 std::uint32_t seed,
                 bool targets = true)
{
    scene s{ nrange, naz, {}, {}, std::vector<double>(naz), 0 };
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, 0.1);
    for (std::size_t n = 0; n < naz; ++n) {
        const double x = (double(n) - double(naz) / 2) / (double(naz) / 2);
        s.error[n] =
            2.5 * std::sin(2.0 * pi * 2.0 * double(n) / double(naz) + 0.3) + 6.0 * x * x;
    }
    double top = 0;
    for (std::size_t r = 0; r < nrange; ++r) {
        std::vector<cd> pulses(naz);
        for (std::size_t n = 0; n < naz; ++n)
            pulses[n] = cd(g(rng), g(rng));
        if (targets && r % 3 == 0) {
            const double a = 10.0 * (1.0 + u(rng));
            const std::size_t k = std::size_t(u(rng) * double(naz)) % naz;
            const double phase = 2 * pi * u(rng);
            for (std::size_t n = 0; n < naz; ++n)
                pulses[n] +=
                    std::polar(a, phase + 2.0 * pi * double((k * n) % naz) / double(naz));
            if (a > top) {
                top = a;
                s.bright_row = r;
            }
        }
        std::vector<cd> blurred(naz);
        for (std::size_t n = 0; n < naz; ++n)
            blurred[n] = pulses[n] * std::polar(1.0, s.error[n]);
        for (const auto& v : dft(pulses, -1))
            s.clean.push_back(cfloat(v));
        for (const auto& v : dft(blurred, -1))
            s.blurred.push_back(cfloat(v));
    }
    return s;
}

//! x minus its least-squares line (in double).
std::vector<double> detrend(std::vector<double> x)
{
    const double n = double(x.size());
    double si = 0, sx = 0, sii = 0, six = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        si += double(i);
        sx += x[i];
        sii += double(i) * double(i);
        six += double(i) * x[i];
    }
    const double slope = (n * six - si * sx) / (n * sii - si * si);
    const double icpt = (sx - slope * si) / n;
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] -= icpt + slope * double(i);
    return x;
}

//! The steps of autofocus.h in double with naive DFTs.
struct reference_result {
    std::vector<cd> image;
    std::vector<double> phase;
    int iterations = 0;
    bool converged = false;
};

reference_result reference_pga(const std::vector<cfloat>& in,
                               std::size_t nrange,
                               std::size_t naz,
                               const autofocus::options& o)
{
    reference_result out;
    out.image.assign(in.begin(), in.end());
    out.phase.assign(naz, 0.0);
    std::size_t width = naz;
    auto centred_rows = [&](const std::vector<cd>& img) {
        std::vector<cd> c(nrange * naz);
        for (std::size_t r = 0; r < nrange; ++r) {
            std::size_t best = 0;
            float top = -1;
            for (std::size_t k = 0; k < naz; ++k) {
                const cfloat v(img[r * naz + k]);
                const float p = v.real() * v.real() + v.imag() * v.imag();
                if (p > top) {
                    top = p;
                    best = k;
                }
            }
            std::vector<cd> row(naz);
            for (std::size_t k = 0; k < naz; ++k)
                row[k] = img[r * naz + (k + best) % naz];
            auto g = dft(row, +1);
            cd s = 0;
            for (std::size_t n = 0; n + 1 < naz; ++n)
                s += g[n + 1] * std::conj(g[n]);
            for (std::size_t n = 0; n < naz; ++n)
                g[n] *= std::polar(1.0 / double(naz), -std::arg(s) * double(n));
            const auto back = dft(g, -1);
            std::copy(back.begin(), back.end(), c.begin() + r * naz);
        }
        return c;
    };
    for (out.iterations = 1; out.iterations <= o.max_iterations; ++out.iterations) {
        auto c = centred_rows(out.image);
        std::vector<double> profile(naz, 0.0);
        for (std::size_t r = 0; r < nrange; ++r)
            for (std::size_t k = 0; k < naz; ++k)
                profile[k] += std::norm(c[r * naz + k]);
        const double floor = 0.1 * *std::max_element(profile.begin(), profile.end());
        std::size_t extent = 0;
        while (extent + 1 < naz / 2 &&
               (profile[naz - extent - 1] >= floor || profile[extent + 1] >= floor))
            ++extent;
        width =
            std::min(width, std::max(o.min_window, std::min(2 * (2 * extent + 1), naz)));
        std::vector<cd> sums(naz, 0.0);
        for (std::size_t r = 0; r < nrange; ++r) {
            std::vector<cd> row(naz);
            for (std::size_t k = 0; k < naz; ++k) {
                const std::size_t d = std::min(k, naz - k);
                row[k] = 2 * d < width ? c[r * naz + k] : cd(0);
            }
            const auto gr = dft(row, +1);
            for (std::size_t n = 1; n < naz; ++n)
                sums[n] += gr[n] * std::conj(gr[n - 1]);
        }
        std::vector<double> e(naz, 0.0);
        for (std::size_t n = 1; n < naz; ++n)
            e[n] = e[n - 1] + std::arg(sums[n]);
        e = detrend(e);
        double ss = 0;
        for (std::size_t n = 0; n < naz; ++n) {
            out.phase[n] += e[n];
            ss += e[n] * e[n];
        }
        for (std::size_t r = 0; r < nrange; ++r) {
            std::vector<cd> row(out.image.begin() + r * naz,
                                out.image.begin() + (r + 1) * naz);
            auto g = dft(row, +1);
            for (std::size_t n = 0; n < naz; ++n)
                g[n] *= std::polar(1.0 / double(naz), -e[n]);
            const auto back = dft(g, -1);
            std::copy(back.begin(), back.end(), out.image.begin() + r * naz);
        }
        if (std::sqrt(ss / double(naz)) < o.tolerance_rad) {
            out.converged = true;
            return out;
        }
    }
    return out;
}

//! Impulse response of one image row, 16x interpolated: IRW (bins, -3 dB) and PSLR (dB).
std::pair<double, double>
irw_pslr(const std::vector<cfloat>& image, std::size_t row, std::size_t naz)
{
    const std::size_t up = 16, m = naz * up;
    std::vector<cd> x(image.begin() + row * naz, image.begin() + (row + 1) * naz);
    auto g = dft(x, +1);
    // the aperture (pulses 0..naz-1) followed by zeros: its DTFT, 16 samples per bin
    std::vector<cd> padded(m, 0.0);
    std::copy(g.begin(), g.end(), padded.begin());
    std::vector<double> p(m);
    const auto y = dft(padded, -1);
    for (std::size_t i = 0; i < m; ++i)
        p[i] = std::norm(y[i]);
    const std::size_t peak = std::max_element(p.begin(), p.end()) - p.begin();
    auto at = [&](long long i) {
        return p[std::size_t((i % (long long)m + (long long)m) % (long long)m)];
    };
    long long lo = 0, hi = 0;
    while (at((long long)peak - lo - 1) >= 0.5 * p[peak])
        ++lo;
    while (at((long long)peak + hi + 1) >= 0.5 * p[peak])
        ++hi;
    const double irw = double(lo + hi + 1) / double(up);
    long long l = (long long)peak - 1, h = (long long)peak + 1; // first nulls
    while (at(l - 1) < at(l))
        --l;
    while (at(h + 1) < at(h))
        ++h;
    double side = 0;
    for (long long i = h; i <= l + (long long)m; ++i)
        side = std::max(side, at(i));
    return { irw, 10.0 * std::log10(side / p[peak]) };
}

double entropy(const std::vector<cfloat>& image)
{
    double total = 0, h = 0;
    for (const auto& v : image)
        total += std::norm(std::complex<double>(v));
    for (const auto& v : image) {
        const double q = std::norm(std::complex<double>(v)) / total;
        h -= q > 0 ? q * std::log(q) : 0.0;
    }
    return h;
}

//! RMS difference of two phase curves after removing the best line between them.
double detrended_rms(const std::vector<double>& a, const std::vector<double>& b)
{
    std::vector<double> d(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        d[i] = a[i] - b[i];
    double ss = 0;
    for (double r : detrend(d))
        ss += r * r;
    return std::sqrt(ss / double(a.size()));
}

constexpr std::size_t nrange = 24, naz = 128;

TEST(AutofocusCpu, test_001_matches_fp64_reference)
{
    const auto s = make_scene(nrange, naz, 7);
    autofocus::options o;
    auto pga = autofocus::make(kernels::backend::cpu, nrange, naz, o);
    std::vector<cfloat> out(s.blurred.size(), cfloat(NAN, NAN));
    const auto got = pga->run(s.blurred.data(), out.data());
    const auto want = reference_pga(s.blurred, nrange, naz, o);
    ASSERT_TRUE(want.converged);
    EXPECT_TRUE(got.converged) << got.reason;
    EXPECT_EQ(got.iterations, want.iterations);
    // float FFTs (~1e-7 per pass, a few tens of passes) against double
    EXPECT_LT(rel_l2(out, want.image), 1e-4);
    EXPECT_LT(detrended_rms(got.phase_error, want.phase), 1e-4);
}

TEST(AutofocusCpu, test_002_refocuses_an_injected_phase_error)
{
    const auto s = make_scene(nrange, naz, 11);
    const auto clean = irw_pslr(s.clean, s.bright_row, naz);
    const auto blurred = irw_pslr(s.blurred, s.bright_row, naz);
    // the injected error is a real defocus: the bar
    ASSERT_TRUE(blurred.first >= 3 * clean.first || blurred.second > -6.0)
        << "IRW " << blurred.first << " vs " << clean.first << ", PSLR "
        << blurred.second;
    auto pga = autofocus::make(kernels::backend::cpu, nrange, naz, {});
    std::vector<cfloat> out(s.blurred.size(), cfloat(NAN, NAN));
    const auto r = pga->run(s.blurred.data(), out.data());
    ASSERT_TRUE(r.converged) << r.reason;
    const auto focused = irw_pslr(out, s.bright_row, naz);
    EXPECT_NEAR(focused.first, clean.first, 0.1 * clean.first);
    EXPECT_NEAR(focused.second, clean.second, 1.0);
    EXPECT_LT(entropy(out), entropy(s.blurred));
    EXPECT_LE(detrended_rms(r.phase_error, s.error), 0.1);
    EXPECT_GE(r.iterations, 1);
}

TEST(AutofocusCpu, test_003_in_place)
{
    const auto s = make_scene(nrange, naz, 12);
    auto pga = autofocus::make(kernels::backend::cpu, nrange, naz, {});
    std::vector<cfloat> apart(s.blurred.size());
    const auto a = pga->run(s.blurred.data(), apart.data());
    auto inplace = s.blurred;
    const auto b = pga->run(inplace.data(), inplace.data());
    EXPECT_TRUE(a.converged && b.converged);
    EXPECT_EQ(0,
              std::memcmp(apart.data(), inplace.data(), apart.size() * sizeof(cfloat)));
}

//! The image with rows and columns exchanged (azimuth along the rows).
std::vector<cfloat>
transposed(const std::vector<cfloat>& a, std::size_t rows, std::size_t cols)
{
    std::vector<cfloat> t(a.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            t[c * rows + r] = a[r * cols + c];
    return t;
}

TEST(AutofocusCpu, test_006_azimuth_along_rows)
{
    // The same image laid out as sar_focus gives it (azimuth lines as rows): the same
    // focus, transposed.
    const auto s = make_scene(nrange, naz, 15);
    auto across = autofocus::make(kernels::backend::cpu, nrange, naz, {});
    std::vector<cfloat> want(s.blurred.size());
    const auto a = across->run(s.blurred.data(), want.data());
    autofocus::options o;
    o.azimuth_contiguous = false;
    auto along = autofocus::make(kernels::backend::cpu, nrange, naz, o);
    const auto in = transposed(s.blurred, nrange, naz);
    std::vector<cfloat> out(in.size(), cfloat(NAN, NAN));
    const auto b = along->run(in.data(), out.data());
    ASSERT_TRUE(a.converged && b.converged) << b.reason;
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_LT(rel_l2(transposed(out, naz, nrange), want), 1e-5);
    EXPECT_LT(detrended_rms(a.phase_error, b.phase_error), 1e-5);
}

TEST(AutofocusCpu, test_004_no_point_targets_or_nan_leaves_the_image)
{
    const auto noise = make_scene(nrange, naz, 13, false).blurred;
    auto pga = autofocus::make(kernels::backend::cpu, nrange, naz, {});
    std::vector<cfloat> out(noise.size(), cfloat(NAN, NAN));
    const auto r = pga->run(noise.data(), out.data());
    EXPECT_FALSE(r.converged);
    EXPECT_NE(r.reason.find("did not converge"), std::string::npos) << r.reason;
    EXPECT_EQ(0, std::memcmp(out.data(), noise.data(), out.size() * sizeof(cfloat)));

    auto bad = make_scene(nrange, naz, 14).blurred;
    bad[5] = cfloat(NAN, 0.0f);
    const auto q = pga->run(bad.data(), out.data());
    EXPECT_FALSE(q.converged);
    EXPECT_EQ(q.nonfinite_samples, 1u);
    EXPECT_EQ(q.iterations, 0);
    EXPECT_EQ(0, std::memcmp(out.data(), bad.data(), out.size() * sizeof(cfloat)));
}

TEST(AutofocusCpu, test_005_bad_parameters_named)
{
    auto expect =
        [](std::size_t nr, std::size_t na, autofocus::options o, const char* name) {
            try {
                autofocus::make(kernels::backend::cpu, nr, na, o);
                ADD_FAILURE() << name << " accepted";
            } catch (const std::invalid_argument& e) {
                EXPECT_NE(std::string(e.what()).find(std::string(name) + " must be"),
                          std::string::npos)
                    << e.what();
            }
        };
    autofocus::options o;
    expect(0, 64, o, "nrange");
    expect(4, 4, o, "naz");
    expect(std::size_t(1) << 20, std::size_t(1) << 20, o, "nrange");
    auto it = o;
    it.max_iterations = 0;
    expect(4, 64, it, "max_iterations");
    auto tol = o;
    tol.tolerance_rad = std::nan("");
    expect(4, 64, tol, "tolerance_rad");
    auto win = o;
    win.min_window = 65;
    expect(4, 64, win, "min_window");
}

//! Minimum-entropy autofocus in double with naive DFTs: the steps of autofocus.h.
std::vector<cd> reference_entropy(const std::vector<cfloat>& in,
                                  std::size_t nrange,
                                  std::size_t naz,
                                  int max_iterations)
{
    std::vector<std::vector<cd>> pulses(nrange);
    double energy = 0;
    for (std::size_t r = 0; r < nrange; ++r) {
        std::vector<cd> row(in.begin() + r * naz, in.begin() + (r + 1) * naz);
        for (const auto& v : row)
            energy += std::norm(v);
        pulses[r] = dft(row, +1);
        for (auto& v : pulses[r])
            v /= double(naz);
    }
    auto image_of = [&](const std::vector<double>& phase) {
        std::vector<cd> img(nrange * naz);
        for (std::size_t r = 0; r < nrange; ++r) {
            std::vector<cd> g(naz);
            for (std::size_t n = 0; n < naz; ++n)
                g[n] = pulses[r][n] * std::polar(1.0, -phase[n]);
            const auto row = dft(g, -1);
            std::copy(row.begin(), row.end(), img.begin() + r * naz);
        }
        return img;
    };
    auto entropy_of = [&](const std::vector<cd>& img) {
        double h = 0;
        for (const auto& v : img) {
            const double p = std::norm(v) / energy;
            h -= p > 0 ? p * std::log(p) : 0.0;
        }
        return h;
    };
    std::vector<double> phase(naz, 0.0);
    auto img = image_of(phase);
    double h = entropy_of(img), last = 0;
    for (int it = 0; it < max_iterations; ++it) {
        std::vector<double> grad(naz, 0.0);
        for (std::size_t r = 0; r < nrange; ++r) {
            std::vector<cd> row(img.begin() + r * naz, img.begin() + (r + 1) * naz),
                w(naz);
            for (std::size_t c = 0; c < naz; ++c)
                w[c] =
                    row[c] * (std::log(std::max(std::norm(row[c]) / energy, 1e-300)) + 1);
            const auto a = dft(row, +1), b = dft(w, +1);
            for (std::size_t n = 0; n < naz; ++n)
                grad[n] += std::imag(a[n] * std::conj(b[n]));
        }
        double top = 0, norm2 = 0;
        for (auto& g : grad) {
            g *= -2.0 / (double(naz) * energy);
            top = std::max(top, std::abs(g));
            norm2 += g * g;
        }
        double step = last > 0 ? 4 * last : 0.5 / top;
        bool lowered = false;
        std::vector<double> trial(naz);
        std::vector<cd> trial_img;
        double ht = h;
        for (int k = 0; k < 40 && !lowered; ++k) {
            for (std::size_t n = 0; n < naz; ++n)
                trial[n] = phase[n] - step * grad[n];
            trial_img = image_of(trial);
            ht = entropy_of(trial_img);
            lowered = ht < h - 1e-4 * step * norm2;
            if (!lowered)
                step *= 0.5;
        }
        if (!lowered)
            break;
        const double drop = h - ht;
        phase = trial;
        img = trial_img;
        h = ht;
        last = step;
        if (drop < 1e-6 * std::abs(h))
            break;
    }
    return img;
}

TEST(AutofocusCpu, test_007_entropy_matches_fp64_reference)
{
    const auto s = make_scene(nrange, naz, 31);
    kernels::autofocus::options o;
    o.algorithm = kernels::autofocus::method::entropy;
    auto mea = kernels::autofocus::make(kernels::backend::cpu, nrange, naz, o);
    std::vector<cfloat> out(s.blurred.size(), cfloat(NAN, NAN));
    const auto r = mea->run(s.blurred.data(), out.data());
    ASSERT_TRUE(r.converged) << r.reason;
    // both descend to the same minimum; float rounding may move a line-search decision
    EXPECT_LT(rel_l2(out, reference_entropy(s.blurred, nrange, naz, o.max_iterations)),
              1e-3);
}

TEST(AutofocusCpu, test_008_entropy_refocuses_an_injected_phase_error)
{
    const auto s = make_scene(nrange, naz, 32);
    kernels::autofocus::options o;
    o.algorithm = kernels::autofocus::method::entropy;
    auto mea = kernels::autofocus::make(kernels::backend::cpu, nrange, naz, o);
    std::vector<cfloat> out(s.blurred.size(), cfloat(NAN, NAN));
    const auto r = mea->run(s.blurred.data(), out.data());
    ASSERT_TRUE(r.converged) << r.reason;
    const auto clean = irw_pslr(s.clean, s.bright_row, naz);
    const auto focused = irw_pslr(out, s.bright_row, naz);
    EXPECT_NEAR(focused.first, clean.first, 0.1 * clean.first);
    EXPECT_NEAR(focused.second, clean.second, 1.0);
    EXPECT_LT(entropy(out), entropy(s.blurred));
    EXPECT_NEAR(entropy(out), entropy(s.clean), 1e-3 * entropy(s.clean));
    // the per-pulse phases come back modulo 2 pi: reported unwrapped and detrended
    std::vector<double> d(naz);
    for (std::size_t n = 0; n < naz; ++n)
        d[n] = std::remainder(r.phase_error[n] - s.error[n], 2 * pi);
    for (std::size_t n = 1; n < naz; ++n)
        d[n] = d[n - 1] + std::remainder(d[n] - d[n - 1], 2 * pi);
    EXPECT_LE(detrended_rms(d, std::vector<double>(naz, 0.0)), 0.1);
    // noise: it keeps finding tiny improvements and never converges: unchanged
    const auto noise = make_scene(nrange, naz, 33, false).blurred;
    o.max_iterations = 30;
    auto short_mea = kernels::autofocus::make(kernels::backend::cpu, nrange, naz, o);
    const auto q = short_mea->run(noise.data(), out.data());
    EXPECT_FALSE(q.converged);
    EXPECT_EQ(0, std::memcmp(out.data(), noise.data(), out.size() * sizeof(cfloat)));
}

TEST(AutofocusCuda, test_010_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    for (std::uint32_t seed : { 21u, 22u }) {
        const auto s = make_scene(nrange, naz, seed);
        auto cpu = autofocus::make(kernels::backend::cpu, nrange, naz, {});
        auto gpu = autofocus::make(kernels::backend::cuda, nrange, naz, {}, stream.ref());
        std::vector<cfloat> want(s.blurred.size());
        const auto rc = cpu->run(s.blurred.data(), want.data());
        auto d_in = to_device(s.blurred, stream);
        kernels::device_memory d_out(s.blurred.size() * sizeof(cfloat));
        poison(d_out, stream);
        const auto rg = gpu->run(d_in.as<cfloat>(), d_out.as<cfloat>());
        const auto got = to_host<cfloat>(d_out, s.blurred.size(), stream);
        EXPECT_EQ(rg.converged, rc.converged) << rg.reason;
        EXPECT_EQ(rg.iterations, rc.iterations);
        // cuFFT and FFTW round differently: both within float rounding of the fp64 steps
        EXPECT_LT(rel_l2(got, want), 1e-4) << "seed " << seed;
        EXPECT_LT(detrended_rms(rg.phase_error, rc.phase_error), 1e-4);
    }
    // azimuth along the rows, on the device too
    {
        const auto s = make_scene(nrange, naz, 24);
        autofocus::options o;
        o.azimuth_contiguous = false;
        auto cpu = autofocus::make(kernels::backend::cpu, nrange, naz, o);
        auto gpu = autofocus::make(kernels::backend::cuda, nrange, naz, o, stream.ref());
        const auto in = transposed(s.blurred, nrange, naz);
        std::vector<cfloat> want(in.size());
        const auto rc = cpu->run(in.data(), want.data());
        auto d_in = to_device(in, stream);
        kernels::device_memory d_out(in.size() * sizeof(cfloat));
        poison(d_out, stream);
        const auto rg = gpu->run(d_in.as<cfloat>(), d_out.as<cfloat>());
        EXPECT_EQ(rg.iterations, rc.iterations);
        EXPECT_LT(rel_l2(to_host<cfloat>(d_out, in.size(), stream), want), 1e-4);
    }
    // minimum entropy, azimuth contiguous and along the rows
    for (bool contiguous : { true, false }) {
        const auto s = make_scene(nrange, naz, 25);
        kernels::autofocus::options o;
        o.algorithm = kernels::autofocus::method::entropy;
        o.azimuth_contiguous = contiguous;
        const auto in = contiguous ? s.blurred : transposed(s.blurred, nrange, naz);
        auto cpu = kernels::autofocus::make(kernels::backend::cpu, nrange, naz, o);
        auto gpu = kernels::autofocus::make(
            kernels::backend::cuda, nrange, naz, o, stream.ref());
        std::vector<cfloat> want(in.size());
        const auto rc = cpu->run(in.data(), want.data());
        auto d_in = to_device(in, stream);
        kernels::device_memory d_out(in.size() * sizeof(cfloat));
        poison(d_out, stream);
        const auto rg = gpu->run(d_in.as<cfloat>(), d_out.as<cfloat>());
        EXPECT_TRUE(rc.converged && rg.converged) << rg.reason;
        // sums in another order may move a line-search decision: the same minimum
        EXPECT_LT(rel_l2(to_host<cfloat>(d_out, in.size(), stream), want), 1e-3)
            << "contiguous " << contiguous;
    }
    // unchanged output when not converged, on the device too
    const auto noise = make_scene(nrange, naz, 23, false).blurred;
    auto gpu = autofocus::make(kernels::backend::cuda, nrange, naz, {}, stream.ref());
    auto d_in = to_device(noise, stream);
    kernels::device_memory d_out(noise.size() * sizeof(cfloat));
    poison(d_out, stream);
    EXPECT_FALSE(gpu->run(d_in.as<cfloat>(), d_out.as<cfloat>()).converged);
    const auto got = to_host<cfloat>(d_out, noise.size(), stream);
    EXPECT_EQ(0, std::memcmp(got.data(), noise.data(), got.size() * sizeof(cfloat)));
}

} // namespace
} // namespace gpuradar::test
