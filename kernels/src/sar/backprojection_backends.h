/*
 * The backprojection stage's backend factories (direct backprojection); what the
 * backends share is in backprojection_common.h.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_BACKENDS_H

#include "sar/backprojection_common.h"
#include <gpuradar/kernels/sar/backprojection.h>
#include <memory>
#include <vector>

namespace gpuradar::kernels::detail {

std::unique_ptr<backprojection> make_backprojection_cpu(const image_grid& g,
                                                        std::size_t nbins,
                                                        backprojection::precision p);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<backprojection> make_backprojection_cuda(const image_grid& g,
                                                         std::size_t nbins,
                                                         backprojection::precision p,
                                                         stream_ref s);
/*!
 * The CUDA backend on a list of devices (backprojection::make): each index checked
 * against the visible devices; one entry: make_backprojection_cuda made with that device
 * current; several: one share of the image rows per device.
 */
std::unique_ptr<backprojection>
make_backprojection_on_devices(const image_grid& g,
                               std::size_t nbins,
                               backprojection::precision p,
                               stream_ref s,
                               const std::vector<int>& devices);
#endif

} // namespace gpuradar::kernels::detail

#endif
