#pragma once
// The engine's prediction of the Eigen layer (cpu_layer.h): the operators
// models::LayerOps lists for that GPT layer (one device, no tensor
// parallelism, materialised attention, fp32 activations), each timed by the
// device model (hardware::GemmTime, hardware::MemoryTime) with the device
// profile given, usually the CPU profile `orrery calibrate run` just wrote.
//
// Backward follows the training estimator's rule (core/estimate/
// training_estimator.cpp, Times()): a GEMM's backward is two GEMMs of the
// same size (input and weight gradients; Narayanan et al. 2021, Sec. 5.1),
// a memory-bound kernel's backward moves twice its forward bytes.

#include "cpu_layer.h"
#include "hardware/device_spec.h"
#include "models/model_spec.h"

namespace orrery::validation {

struct LayerPrediction {
  double forward_s = 0, backward_s = 0;
  double forward_gemm_s = 0, backward_gemm_s = 0;  // the GEMM part of each
  double forward_flop = 0;                          // GEMM FLOP of the forward pass
};

// The GPT model whose one layer the Eigen code implements (GeLU, LayerNorm,
// biases, MHA), for models::LayerOps.
models::ModelSpec CpuLayerModel(const CpuLayerShape& shape);

// Predicted forward and backward time of one layer on `device` with
// activations and GEMMs in `dtype`; `flash` selects fused attention (as
// FlashAttention: causal, so half the score blocks; backward 2.5x the
// forward FLOP at the backward efficiency, Dao 2023 Sec. 3) instead of the
// materialised kind.
LayerPrediction PredictLayer(const CpuLayerShape& shape, const hardware::DeviceSpec& device,
                             hardware::DataType dtype, bool flash);

// The Eigen layer: fp32, materialised attention.
LayerPrediction PredictCpuLayer(const CpuLayerShape& shape, const hardware::DeviceSpec& device);

}  // namespace orrery::validation
