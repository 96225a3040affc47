// Tests of the Eigen layer (its backward pass against finite differences,
// float against double) and of the engine's prediction of it (hand-worked
// numbers). No test asserts a speed: timings on a shared machine are not
// reproducible; `orrery calibrate check-layer` reports them.

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "cpu_layer.h"
#include "cpu_layer_predict.h"

namespace orrery::validation {
namespace {

CpuLayerShape Tiny() {
  CpuLayerShape s;
  s.batch = 2;
  s.seq = 4;
  s.hidden = 8;
  s.heads = 2;
  s.ffn = 12;
  s.dropout = 0.25;  // some elements dropped, so the masks are exercised
  return s;
}

// Loss = sum(out .* R) with R = grad_output(), so dLoss/dout = R.
double Loss(CpuLayer<double>& layer) {
  layer.Forward();
  return (layer.output().array() * layer.grad_output().array()).sum();
}

// Central differences (error O(eps^2)) against the analytic backward pass,
// for the input and every element of every parameter.
TEST(CpuLayer, BackwardMatchesFiniteDifferences) {
  CpuLayer<double> layer(Tiny(), 42);
  layer.Forward();
  layer.Backward();
  const double eps = 1e-6;
  auto check = [&](const std::string& name, CpuLayer<double>::Matrix& value,
                   const CpuLayer<double>::Matrix& grad) {
    ASSERT_EQ(value.rows(), grad.rows()) << name;
    ASSERT_EQ(value.cols(), grad.cols()) << name;
    for (Eigen::Index r = 0; r < value.rows(); ++r) {
      for (Eigen::Index c = 0; c < value.cols(); ++c) {
        const double saved = value(r, c);
        value(r, c) = saved + eps;
        const double up = Loss(layer);
        value(r, c) = saved - eps;
        const double down = Loss(layer);
        value(r, c) = saved;
        const double numeric = (up - down) / (2 * eps);
        EXPECT_NEAR(grad(r, c), numeric, 1e-7 + 1e-6 * std::fabs(numeric))
            << name << "(" << r << ", " << c << ")";
      }
    }
  };
  const CpuLayer<double>::Matrix dx = layer.grad_input();
  check("input", layer.input(), dx);
  const auto params = layer.Parameters();
  const auto grads = layer.Gradients();
  ASSERT_EQ(params.size(), 12u);
  for (size_t i = 0; i < params.size(); ++i) {
    ASSERT_EQ(params[i].first, grads[i].first);
    const CpuLayer<double>::Matrix g = *grads[i].second;
    check(params[i].first, *params[i].second, g);
  }
}

TEST(CpuLayer, FloatAgreesWithDouble) {
  CpuLayerShape s = Tiny();
  s.seq = 16;
  s.hidden = 32;
  s.heads = 4;
  CpuLayer<float> f(s, 7);
  CpuLayer<double> d(s, 7);
  f.Forward();
  d.Forward();
  f.Backward();
  d.Backward();
  EXPECT_LT((f.output().cast<double>() - d.output()).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LT((f.grad_input().cast<double>() - d.grad_input()).cwiseAbs().maxCoeff(), 1e-4);
}

TEST(CpuLayer, CausalRowsIgnoreLaterTokens) {
  // Changing the last token of a sequence leaves every earlier token's output alone.
  CpuLayerShape s = Tiny();
  s.batch = 1;
  CpuLayer<double> layer(s, 3);
  layer.Forward();
  const CpuLayer<double>::Matrix before = layer.output();
  layer.input().row(s.seq - 1).array() += 0.5;
  layer.Forward();
  EXPECT_EQ((layer.output().topRows(s.seq - 1) - before.topRows(s.seq - 1)).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_GT((layer.output().row(s.seq - 1) - before.row(s.seq - 1)).cwiseAbs().maxCoeff(), 0.0);
}

TEST(CpuLayer, ShapeValidationNamesTheField) {
  CpuLayerShape s;
  s.heads = 3;
  EXPECT_EQ(ValidateCpuLayerShape(s), "heads: must be >= 1 and divide hidden (256), got 3");
  s = CpuLayerShape{};
  s.batch = 0;
  EXPECT_EQ(ValidateCpuLayerShape(s), "batch: must be in [1, 64], got 0");
  EXPECT_EQ(ValidateCpuLayerShape(CpuLayerShape{}), "");
  EXPECT_EQ(CpuLayerShape{}.Name(), "b1 s128 h256 a4");
}

// Plumbing of the timer, not speed: counts and ordering only.
TEST(CpuLayer, TimingCountsCalls) {
  CpuLayerTimingOptions o;
  o.threads = 1;
  o.warmups = 1;
  o.reps = 3;
  o.min_sample_s = 0;
  const CpuLayerTiming t = TimeCpuLayer(Tiny(), o);
  EXPECT_EQ(t.forward_calls, 1 + 1 + 3);  // warm-up, sizing call, samples
  EXPECT_EQ(t.backward_calls, 1 + 1 + 3);
  EXPECT_GT(t.forward_median_s, 0);
  EXPECT_LE(t.forward_min_s, t.forward_median_s);
  EXPECT_LE(t.backward_min_s, t.backward_median_s);
  EXPECT_GT(t.forward_gemm_share, 0);
  EXPECT_LT(t.forward_gemm_share, 1);
}

// A device with flat curves: fp32 peak 100 GFLOP/s at efficiency 0.5,
// memory 10 GB/s at efficiency 1, no overhead. Layer b1 s128 h256 a4
// (T = 128 tokens, f = 1024, d = 64), fp32 (e = 4 bytes), mask 1 byte:
//   GEMM FLOP: qkv 2*128*768*256 = 50,331,648; scores and attention over
//   values 2*(4*128*128)*64 = 8,388,608 each; out 2*128*256*256 = 16,777,216;
//   up and down 2*128*1024*256 = 67,108,864 each; sum 218,103,808
//   (= 24 T h^2 + 4 T s h). All compute-bound at 5e10 FLOP/s effective
//   (the largest, up: 1.7 MB in 170 us vs 1342 us of compute).
//   Elementwise bytes: norms 2*T*h*e = 262,144 each (2); softmax 2*16384*4*4
//   = 524,288; attention dropout 65,536*9 = 589,824; dropout-residual
//   T*h*13 = 425,984 each (2); gelu T*f*2*e = 1,048,576; sum 3,538,944.
TEST(PredictCpuLayer, HandWorkedFlatDevice) {
  hardware::DeviceSpec d;
  d.peak_fp32 = 100e9;
  d.peak_bf16 = 100e9;
  d.memory_bandwidth = 10e9;
  d.gemm_efficiency = {{1e9}, {0.5}};
  d.kernel_overhead = 0;
  CpuLayerShape s;
  s.batch = 1;
  s.seq = 128;
  s.hidden = 256;
  s.heads = 4;
  const LayerPrediction p = PredictCpuLayer(s, d);
  EXPECT_DOUBLE_EQ(p.forward_flop, 218103808.0);
  EXPECT_NEAR(p.forward_gemm_s, 218103808.0 / 5e10, 1e-15);
  EXPECT_NEAR(p.forward_s, 218103808.0 / 5e10 + 3538944.0 / 1e10, 1e-15);
  EXPECT_NEAR(p.backward_gemm_s, 2 * 218103808.0 / 5e10, 1e-15);
  EXPECT_NEAR(p.backward_s, 2 * 218103808.0 / 5e10 + 2 * 3538944.0 / 1e10, 1e-15);
  // With a per-kernel overhead of 1 us: 6 GEMMs and 7 elementwise kernels forward.
  d.kernel_overhead = 1e-6;
  const LayerPrediction q = PredictCpuLayer(s, d);
  EXPECT_NEAR(q.forward_s - p.forward_s, 13e-6, 1e-15);
  // Backward: each GEMM is twice a forward GEMM, overhead included (12 us);
  // each elementwise kernel moves twice the bytes in one kernel (7 us).
  EXPECT_NEAR(q.backward_s - p.backward_s, 19e-6, 1e-15);
}

}  // namespace
}  // namespace orrery::validation
