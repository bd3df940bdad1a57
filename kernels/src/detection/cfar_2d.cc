/* cfar_2d: parameter checks, the plan, backend dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "detection/cfar_plan.h"
#include <gpuradar/kernels/detection/cfar_2d.h>

namespace gpuradar::kernels {

namespace {
constexpr const char* stage = "cfar_2d";
} // namespace

void cfar_2d::validate(const params& p)
{
    detail::cfar_check_extent(stage, "nrange", p.nrange);
    detail::cfar_check_extent(stage, "ndoppler", p.ndoppler);
    detail::cfar_check_extent(stage, "channels", p.channels);
    detail::cfar_check_count(stage, "guard_range", p.guard_range);
    detail::cfar_check_count(stage, "train_range", p.train_range);
    detail::cfar_check_count(stage, "guard_doppler", p.guard_doppler);
    detail::cfar_check_count(stage, "train_doppler", p.train_doppler);
    if (p.train_range + p.train_doppler < 1)
        detail::throw_invalid(stage,
                              "train_range + train_doppler",
                              ">= 1: a window needs a training cell",
                              p.train_range + p.train_doppler);
    detail::cfar_check_fits(stage,
                            "guard_range",
                            p.guard_range,
                            "train_range",
                            p.train_range,
                            "nrange",
                            p.nrange,
                            "range_edge",
                            p.range_edge);
    detail::cfar_check_fits(stage,
                            "guard_doppler",
                            p.guard_doppler,
                            "train_doppler",
                            p.train_doppler,
                            "ndoppler",
                            p.ndoppler,
                            "doppler_edge",
                            p.doppler_edge);
    detail::cfar_check_window_cells(
        stage, p.guard_range + p.train_range, p.guard_doppler + p.train_doppler);
    detail::cfar_check_pfa(stage, p.pfa);
    if (p.variant == cfar_variant::os) {
        const int n = (2 * (p.guard_range + p.train_range) + 1) *
                          (2 * (p.guard_doppler + p.train_doppler) + 1) -
                      (2 * p.guard_range + 1) * (2 * p.guard_doppler + 1);
        detail::cfar_check_os_k(stage, p.os_k, n);
    }
    detail::cfar_check_extent(stage, "max_cpi", p.max_cpi);
    detail::cfar_check_sizes(stage,
                             { { "max_cpi", p.max_cpi },
                               { "nrange", p.nrange },
                               { "channels", p.channels },
                               { "ndoppler", p.ndoppler } },
                             p.max_detections);
}

cfar_2d::cfar_2d(const params& p) : d_params(p) {}
cfar_2d::~cfar_2d() = default;

std::unique_ptr<cfar_2d> cfar_2d::make(backend b, const params& p, stream_ref stream)
{
    validate(p);
    detail::require_backend(b, stage);
    detail::cfar_plan_request r;
    r.stage = stage;
    r.guard_rows = p.guard_range;
    r.train_rows = p.train_range;
    r.guard_cols = p.guard_doppler;
    r.train_cols = p.train_doppler;
    r.row_edge = p.range_edge;
    r.col_edge = p.doppler_edge;
    r.variant = p.variant;
    r.os_k = p.os_k;
    r.pfa = p.pfa;
    r.local_max = p.local_max;
    r.local_max_rows = 1;
    r.estimator = p.estimator;
    r.max_maps = p.max_cpi * p.channels;
    r.max_detections = p.max_detections;
    if (p.cluster)
        r.clustering = detection_clustering_params{ p.nrange,
                                                    p.ndoppler,
                                                    p.range_edge == cfar_edge::wrap,
                                                    p.doppler_edge == cfar_edge::wrap };
    const detail::cfar_plan plan = detail::make_cfar_plan(r);

    std::unique_ptr<cfar_2d> self(new cfar_2d(p));
    self->d_training_cells = plan.n_full;
    self->d_alpha = plan.alpha_full;
    self->d_engine = detail::make_cfar_engine(b, plan, p.nrange, p.ndoppler, stream);
    self->d_estimator = self->d_engine->estimator();
    return self;
}

void cfar_2d::run(const float* power,
                  std::uint8_t* mask,
                  float* threshold,
                  std::size_t ncpi)
{
    detail::cfar_check_run(stage, power, mask, "ncpi", ncpi, "max_cpi", d_params.max_cpi);
    detail::cfar_geometry g;
    g.nmaps = ncpi * d_params.channels;
    g.nrows = d_params.nrange;
    g.ncols = d_params.ndoppler;
    g.row_stride = d_params.channels * d_params.ndoppler;
    g.channels = d_params.channels;
    g.group_stride = d_params.nrange * g.row_stride;
    d_engine->run(g, power, mask, threshold);
}

cfar_report cfar_2d::collect() { return d_engine->collect(); }

std::vector<float> cfar_2d::channel_powers(const float* power,
                                           const std::vector<cfar_detection>& detections)
{
    const std::size_t nc = d_params.channels, nd = d_params.ndoppler;
    std::vector<std::size_t> starts;
    starts.reserve(detections.size());
    for (const auto& d : detections) {
        // Element (cpi, r, channel 0, d); the channels follow ndoppler apart.
        const std::size_t cpi = d.map / nc;
        starts.push_back(((cpi * d_params.nrange + d.range_bin) * nc) * nd +
                         d.doppler_bin);
    }
    std::vector<float> out(starts.size() * nc);
    if (!starts.empty())
        d_engine->gather(power, starts, nc, nd, out.data());
    return out;
}

} // namespace gpuradar::kernels
