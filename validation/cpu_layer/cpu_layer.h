#pragma once
// One GPT transformer layer, forward and backward, in Eigen on the CPU: the
// smallest honest instance of "predict, then measure" (issue 9 part 3). It
// computes exactly the operators models::LayerOps lists for a GPT layer with
// materialised attention (Megatron-LM 2021-22 as described by Korthikanti et
// al. 2022, Sec. 4 and Fig. 2), so the engine's prediction of this layer can
// be compared with its measured time:
//
//   x ─ LN ─ QKV GEMM ─ per head: Q Kᵀ/√d ─ causal softmax ─ dropout ─ · V ─┐
//   │                                                                        │
//   └──────────────── + dropout( out-proj GEMM ) ◀───────────────────────────┘
//   x2 ─ LN ─ up GEMM (4h) ─ GELU (tanh form) ─ down GEMM ─ dropout ─ + x2 = out
//
// Activations are row-major, one row per token (T = batch x seq rows).
// Dropout masks are fixed at construction (one byte per element, as the
// engine counts them), so the layer is a deterministic function of its input
// and parameters: the backward pass is checked against finite differences in
// cpu_layer_test.cpp. Backward computes every gradient, weights included.
//
// Elementwise kernels run rows in parallel with OpenMP; GEMMs use Eigen's
// own threads. Set both with SetCpuThreads before timing.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "cpu_probe.h"

namespace orrery::validation {

struct CpuLayerShape {
  std::int64_t batch = 1;   // b, sequences per microbatch
  std::int64_t seq = 128;   // s, tokens per sequence
  std::int64_t hidden = 256;  // h
  std::int64_t heads = 4;   // a; head dim d = h / a
  std::int64_t ffn = 0;     // MLP inner size; 0 = 4h
  double dropout = 0.1;     // probability of dropping an element

  std::int64_t Ffn() const { return ffn > 0 ? ffn : 4 * hidden; }
  std::int64_t Tokens() const { return batch * seq; }
  // "b1 s256 h512 a8"
  std::string Name() const;
};

// Empty when the shape can run, else the rule broken ("heads: must divide hidden ...").
std::string ValidateCpuLayerShape(const CpuLayerShape& s);

// Time spent in GEMMs and in everything else, accumulated over calls.
struct StageTimes {
  double gemm_s = 0;
  double other_s = 0;
  std::int64_t calls = 0;
};

template <class Scalar>
class CpuLayer {
 public:
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Vector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;

  // Parameters and input are pseudo-random (fixed by `seed`), scaled like a
  // freshly initialised GPT layer (std 0.02); the shape must be valid.
  CpuLayer(const CpuLayerShape& shape, std::uint64_t seed);

  // input() -> output(), saving what backward needs.
  void Forward();
  // grad_output() -> grad_input() and every parameter gradient. Needs a
  // Forward() first; may be called repeatedly (it overwrites, never adds).
  void Backward();

  Matrix& input() { return x_; }
  const Matrix& output() const { return out_; }
  Matrix& grad_output() { return dout_; }
  const Matrix& grad_input() const { return dx_; }

  // Named parameters and their gradients, same order (for tests).
  std::vector<std::pair<std::string, Matrix*>> Parameters();
  std::vector<std::pair<std::string, const Matrix*>> Gradients() const;

  // When set, Forward and Backward add their GEMM and other time here.
  void set_forward_stages(StageTimes* t) { fwd_stages_ = t; }
  void set_backward_stages(StageTimes* t) { bwd_stages_ = t; }
  // The clock the stage timers read (wall by default).
  void set_stage_clock(calibration::TimerClock c) { stage_clock_ = c; }

 private:
  class Clock;
  CpuLayerShape shape_;
  std::int64_t t_, h_, a_, d_, f_, s_, b_;
  Scalar scale_;  // 1 / (1 - dropout)
  // Parameters (weights are in x out) and gradients. Biases and norm
  // parameters are 1-row matrices.
  Matrix w_qkv_, b_qkv_, w_o_, b_o_, w_1_, b_1_, w_2_, b_2_, g_1_, beta_1_, g_2_, beta_2_;
  Matrix dw_qkv_, db_qkv_, dw_o_, db_o_, dw_1_, db_1_, dw_2_, db_2_, dg_1_, dbeta_1_, dg_2_, dbeta_2_;
  // Fixed dropout masks: attention probabilities (b*a*s rows x s), the two residual branches.
  std::vector<std::uint8_t> mask_att_, mask_r1_, mask_r2_;
  // Activations saved by Forward.
  Matrix x_, xhat1_, y1_, qkv_, p_, pd_, o_, attn_, x2_, xhat2_, y2_, u_, g_, dn_, out_;
  Vector rstd1_, rstd2_;
  // Backward buffers.
  Matrix dout_, d_dn_, dg_, du_, dy2_, dx2_, d_attn_, d_o_, d_pd_, d_s_, d_qkv_, dy1_, dx_;
  StageTimes* fwd_stages_ = nullptr;
  StageTimes* bwd_stages_ = nullptr;
  calibration::TimerClock stage_clock_ = calibration::TimerClock::kWall;
};

extern template class CpuLayer<float>;
extern template class CpuLayer<double>;

// Threads for Eigen's GEMMs and the OpenMP elementwise loops (0 = all).
// Returns the number used.
int SetCpuThreads(int threads);

struct CpuLayerTimingOptions {
  int threads = 1;
  int warmups = 2;
  int reps = 7;
  double min_sample_s = 0.05;  // each sample repeats the pass until it lasts this long
  // kThreadCpu (threads = 1 only) leaves out the time spent waiting for a
  // core on a busy machine (cpu_probe.h).
  calibration::TimerClock clock = calibration::TimerClock::kWall;
};

// Measured time of one fp32 layer pass, per call.
struct CpuLayerTiming {
  double forward_median_s = 0, forward_min_s = 0;
  double backward_median_s = 0, backward_min_s = 0;
  // Share of the pass spent in GEMMs (mean over every timed call).
  double forward_gemm_share = 0, backward_gemm_share = 0;
  std::int64_t forward_calls = 0, backward_calls = 0;
};

// Times Forward, then Backward (after one Forward), of a float layer.
CpuLayerTiming TimeCpuLayer(const CpuLayerShape& shape, const CpuLayerTimingOptions& options);

}  // namespace orrery::validation
