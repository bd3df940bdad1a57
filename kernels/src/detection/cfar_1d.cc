/* cfar_1d: parameter checks, the plan (one row, no window across rows), dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "detection/cfar_plan.h"
#include <gpuradar/kernels/detection/cfar_1d.h>

namespace gpuradar::kernels {

namespace {
constexpr const char* stage = "cfar_1d";
} // namespace

void cfar_1d::validate(const params& p)
{
    detail::cfar_check_extent(stage, "nrange", p.nrange);
    detail::cfar_check_extent(stage, "channels", p.channels);
    detail::cfar_check_count(stage, "guard", p.guard);
    if (p.train < 1)
        detail::throw_invalid(
            stage, "train", ">= 1: a window needs a training cell", p.train);
    detail::cfar_check_fits(
        stage, "guard", p.guard, "train", p.train, "nrange", p.nrange, "edge", p.edge);
    detail::cfar_check_window_cells(stage, 0, p.guard + p.train);
    detail::cfar_check_pfa(stage, p.pfa);
    if (p.variant == cfar_variant::os)
        detail::cfar_check_os_k(stage, p.os_k, 2 * p.train);
    detail::cfar_check_extent(stage, "max_items", p.max_items);
    detail::cfar_check_sizes(stage,
                             { { "max_items", p.max_items },
                               { "channels", p.channels },
                               { "nrange", p.nrange } },
                             p.max_detections);
}

cfar_1d::cfar_1d(const params& p) : d_params(p) {}
cfar_1d::~cfar_1d() = default;

std::unique_ptr<cfar_1d> cfar_1d::make(backend b, const params& p, stream_ref stream)
{
    validate(p);
    detail::require_backend(b, stage);
    detail::cfar_plan_request r;
    r.stage = stage;
    r.guard_rows = 0;
    r.train_rows = 0;
    r.guard_cols = p.guard;
    r.train_cols = p.train;
    r.row_edge = cfar_edge::clip; // a line has one row: nothing above or below it
    r.col_edge = p.edge;
    r.variant = p.variant;
    r.os_k = p.os_k;
    r.pfa = p.pfa;
    r.local_max = p.local_max;
    r.local_max_rows = 0;
    r.estimator = p.estimator;
    r.max_maps = p.max_items * p.channels;
    r.max_detections = p.max_detections;
    const detail::cfar_plan plan = detail::make_cfar_plan(r);

    std::unique_ptr<cfar_1d> self(new cfar_1d(p));
    self->d_alpha = plan.alpha_full;
    self->d_engine = detail::make_cfar_engine(b, plan, 1, p.nrange, stream);
    self->d_estimator = self->d_engine->estimator();
    return self;
}

void cfar_1d::run(const float* power,
                  std::uint8_t* mask,
                  float* threshold,
                  std::size_t nitems)
{
    detail::cfar_check_run(
        stage, power, mask, "nitems", nitems, "max_items", d_params.max_items);
    // Every line is a map of one row; lines lie back to back.
    detail::cfar_geometry g;
    g.nmaps = nitems * d_params.channels;
    g.nrows = 1;
    g.ncols = d_params.nrange;
    g.row_stride = d_params.nrange;
    g.channels = 1;
    g.group_stride = d_params.nrange;
    d_engine->run(g, power, mask, threshold);
}

cfar_report cfar_1d::collect()
{
    cfar_report r = d_engine->collect();
    for (auto& d : r.detections) { // the engine's column is the line's range bin
        d.range_bin = d.doppler_bin;
        d.doppler_bin = 0;
        d.range_prev = d.doppler_prev;
        d.range_next = d.doppler_next;
        d.doppler_prev = d.doppler_next = NAN;
    }
    return r;
}

} // namespace gpuradar::kernels
