/*
 * The heavy sums of phase-history autofocus (gpuradar::kernels::pulse_autofocus), bound
 * as gnuradio.gpuradar.pulse_autofocus_core for python/gpuradar/pulse_autofocus.py,
 * which orchestrates the iterations.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/sar/pulse_autofocus.h>
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <memory>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace {

namespace k = ::gpuradar::kernels;
using cdouble = std::complex<double>;
template <typename T>
using carray = py::array_t<T, py::array::c_style | py::array::forcecast>;

k::backend choose(const std::string& name)
{
    if (name == "cpu")
        return k::backend::cpu;
    if (name == "cuda") {
        if (!k::cuda_available())
            throw k::cuda_error("gpuradar::pulse_autofocus: backend 'cuda' requested "
                                "but no usable CUDA device: " +
                                k::cuda_unavailable_reason());
        return k::backend::cuda;
    }
    if (name == "auto")
        return k::cuda_available() ? k::backend::cuda : k::backend::cpu;
    throw std::invalid_argument("gpuradar::pulse_autofocus: backend must be one of "
                                "auto, cuda, cpu (got '" +
                                name + "')");
}

void check_shape(const py::array& a,
                 std::initializer_list<py::ssize_t> shape,
                 const char* name)
{
    bool ok = a.ndim() == py::ssize_t(shape.size());
    std::string want;
    std::size_t i = 0;
    for (py::ssize_t s : shape) {
        ok = ok && a.shape(i) == s;
        want += (i++ ? " x " : "") + std::to_string(s);
    }
    if (!ok)
        throw std::invalid_argument(std::string("gpuradar::pulse_autofocus: ") + name +
                                    " must be " + want);
}

class terms
{
public:
    terms(const std::string& backend,
          const carray<std::complex<float>>& pulses,
          const carray<double>& geometry,
          const py::tuple& grid,
          const carray<std::int32_t>& pixels,
          const std::string& interpolator)
        : d_backend(choose(backend))
    {
        const auto interp = k::pulse_autofocus::parse_interpolator(interpolator);
        if (pulses.ndim() != 2)
            throw std::invalid_argument(
                "gpuradar::pulse_autofocus: pulses must be npulses x nbins");
        if (pixels.ndim() != 2 || pixels.shape(1) != 2)
            throw std::invalid_argument(
                "gpuradar::pulse_autofocus: pixels must be npixels x 2 (iy, ix)");
        const auto n = pulses.shape(0);
        check_shape(geometry, { n, 6 }, "geometry");
        if (grid.size() != 5)
            throw std::invalid_argument(
                "gpuradar::pulse_autofocus: grid must be (x0, y0, dx, dy, z)");
        const k::pulse_autofocus::grid g{ grid[0].cast<double>(),
                                          grid[1].cast<double>(),
                                          grid[2].cast<double>(),
                                          grid[3].cast<double>(),
                                          grid[4].cast<double>() };
        d_pa = k::pulse_autofocus::make(d_backend,
                                        std::size_t(n),
                                        std::size_t(pulses.shape(1)),
                                        std::size_t(pixels.shape(0)),
                                        k::stream_ref(),
                                        interp);
        py::gil_scoped_release release;
        d_pa->set_terms(reinterpret_cast<const k::cfloat*>(pulses.data()),
                        geometry.data(),
                        g,
                        pixels.data());
    }

    py::array_t<cdouble> image(const carray<double>& phi)
    {
        check_shape(phi, { py::ssize_t(d_pa->npulses()) }, "phi");
        py::array_t<cdouble> out(py::ssize_t(d_pa->npixels()));
        cdouble* o = out.mutable_data();
        {
            py::gil_scoped_release release;
            d_pa->image(phi.data(), o);
        }
        return out;
    }

    py::array_t<cdouble> project(const carray<cdouble>& w)
    {
        check_shape(w, { py::ssize_t(d_pa->npixels()) }, "w");
        py::array_t<cdouble> out(py::ssize_t(d_pa->npulses()));
        cdouble* o = out.mutable_data();
        {
            py::gil_scoped_release release;
            d_pa->project(w.data(), o);
        }
        return out;
    }

    py::array_t<cdouble> target_echoes(const carray<std::int32_t>& centres,
                                       const carray<std::int32_t>& start,
                                       const carray<std::int32_t>& window,
                                       const carray<cdouble>& image)
    {
        const py::ssize_t t = centres.ndim() == 1 ? centres.shape(0) : -1;
        if (t < 1)
            throw std::invalid_argument(
                "gpuradar::pulse_autofocus: centres must be a 1-D array of >= 1 pixels");
        check_shape(start, { t + 1 }, "start");
        check_shape(image, { py::ssize_t(d_pa->npixels()) }, "image");
        if (window.ndim() != 1 || window.shape(0) < start.at(t))
            throw std::invalid_argument("gpuradar::pulse_autofocus: window must be a "
                                        "1-D array of at least start[-1] pixels");
        py::array_t<cdouble> out({ t, py::ssize_t(d_pa->npulses()) });
        cdouble* o = out.mutable_data();
        {
            py::gil_scoped_release release;
            d_pa->target_echoes(std::size_t(t),
                                centres.data(),
                                start.data(),
                                window.data(),
                                image.data(),
                                o);
        }
        return out;
    }

    std::string backend() const { return k::to_string(d_backend); }
    std::string interpolator() const
    {
        return k::pulse_autofocus::to_string(d_pa->interp());
    }

private:
    k::backend d_backend;
    std::unique_ptr<k::pulse_autofocus> d_pa;
};

} // namespace

void bind_pulse_autofocus(py::module& m)
{
    py::class_<terms>(
        m,
        "pulse_autofocus_core",
        "Each pulse's term of each chip pixel and the sums phase-history "
        "autofocus takes per iteration (gpuradar::kernels::pulse_autofocus); "
        "use gnuradio.gpuradar.pulse_autofocus.")
        .def(py::init<const std::string&,
                      const carray<std::complex<float>>&,
                      const carray<double>&,
                      const py::tuple&,
                      const carray<std::int32_t>&,
                      const std::string&>(),
             py::arg("backend"),
             py::arg("pulses"),
             py::arg("geometry"),
             py::arg("grid"),
             py::arg("pixels"),
             py::arg("interpolator") = "linear",
             "backend 'cpu' | 'cuda' | 'auto'; pulses (npulses, nbins) complex64, "
             "geometry (npulses, 6), grid (x0, y0, dx, dy, z), pixels (npixels, 2) of "
             "(iy, ix); interpolator 'linear' (backprojection's) | 'sinc16' (16-tap "
             "Kaiser-windowed sinc: pulses sampled barely finer than their resolution).")
        .def("image",
             &terms::image,
             py::arg("phi"),
             "image[p] = sum_n exp(-j phi[n]) D[n, p] (complex128).")
        .def("project", &terms::project, py::arg("w"), "y[n] = sum_p D[n, p] w[p].")
        .def("target_echoes",
             &terms::target_echoes,
             py::arg("centres"),
             py::arg("start"),
             py::arg("window"),
             py::arg("image"),
             "PGA's echoes g[t, n] of each target's window (ntargets, npulses).")
        .def_property_readonly("backend", &terms::backend)
        .def_property_readonly("interpolator", &terms::interpolator);
}
