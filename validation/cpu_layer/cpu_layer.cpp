#include "cpu_layer.h"

#include <cmath>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#define ORRERY_OMP_FOR _Pragma("omp parallel for schedule(static)")
#else
#define ORRERY_OMP_FOR
#endif

namespace orrery::validation {
namespace {

using Index = Eigen::Index;

constexpr double kLayerNormEps = 1e-5;
// GELU, tanh approximation (Hendrycks & Gimpel 2016, Sec. 2):
// gelu(u) = 0.5 u (1 + tanh(c (u + k u^3))), c = sqrt(2/pi), k = 0.044715.
constexpr double kGeluC = 0.7978845608028654;
constexpr double kGeluK = 0.044715;

// SplitMix64 (Steele, Lea & Flood 2014): a small, fixed pseudo-random stream.
class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-52 - 1.0; }

 private:
  std::uint64_t state_;
};

template <class M>
void Fill(M& m, SplitMix& rng, double scale, double offset = 0.0) {
  for (Index r = 0; r < m.rows(); ++r)
    for (Index c = 0; c < m.cols(); ++c)
      m(r, c) = static_cast<typename M::Scalar>(offset + scale * rng.Uniform());
}

std::vector<std::uint8_t> Mask(std::size_t n, double drop, SplitMix& rng) {
  std::vector<std::uint8_t> m(n);
  for (auto& v : m) v = (0.5 * (rng.Uniform() + 1.0)) >= drop ? 1 : 0;
  return m;
}

}  // namespace

std::string CpuLayerShape::Name() const {
  return "b" + std::to_string(batch) + " s" + std::to_string(seq) + " h" + std::to_string(hidden) +
         " a" + std::to_string(heads);
}

std::string ValidateCpuLayerShape(const CpuLayerShape& s) {
  if (s.batch < 1 || s.batch > 64) return "batch: must be in [1, 64], got " + std::to_string(s.batch);
  if (s.seq < 1 || s.seq > 8192) return "seq: must be in [1, 8192], got " + std::to_string(s.seq);
  if (s.hidden < 1 || s.hidden > 16384)
    return "hidden: must be in [1, 16384], got " + std::to_string(s.hidden);
  if (s.heads < 1 || s.hidden % s.heads != 0)
    return "heads: must be >= 1 and divide hidden (" + std::to_string(s.hidden) + "), got " +
           std::to_string(s.heads);
  if (s.ffn < 0 || s.ffn > 65536) return "ffn: must be in [0, 65536], got " + std::to_string(s.ffn);
  if (!(s.dropout >= 0 && s.dropout < 1)) return "dropout: must be in [0, 1)";
  // The attention probabilities are kept twice (before and after dropout).
  const double bytes = 2.0 * 4.0 * static_cast<double>(s.batch * s.heads) * static_cast<double>(s.seq * s.seq);
  if (bytes > 4e9) return "batch x heads x seq^2 too large for this check (over 4 GB of scores)";
  return {};
}

// Attributes the time since the last mark to GEMMs or to other kernels.
template <class Scalar>
class CpuLayer<Scalar>::Clock {
 public:
  Clock(StageTimes* t, calibration::TimerClock clock) : t_(t), clock_(clock) {
    if (t_) last_ = calibration::NowSeconds(clock_);
  }
  ~Clock() {
    if (t_) ++t_->calls;
  }
  void Gemm() { Mark(&StageTimes::gemm_s); }
  void Other() { Mark(&StageTimes::other_s); }

 private:
  void Mark(double StageTimes::*field) {
    if (!t_) return;
    const double now = calibration::NowSeconds(clock_);
    t_->*field += now - last_;
    last_ = now;
  }
  StageTimes* t_;
  calibration::TimerClock clock_;
  double last_ = 0;
};

template <class Scalar>
CpuLayer<Scalar>::CpuLayer(const CpuLayerShape& shape, std::uint64_t seed)
    : shape_(shape),
      t_(shape.Tokens()),
      h_(shape.hidden),
      a_(shape.heads),
      d_(shape.hidden / shape.heads),
      f_(shape.Ffn()),
      s_(shape.seq),
      b_(shape.batch),
      scale_(static_cast<Scalar>(1.0 / (1.0 - shape.dropout))) {
  SplitMix rng(seed);
  // GPT-2 style initialisation: weights with std 0.02 (uniform of half-width
  // 0.02 sqrt(3)); biases and norm shifts small, norm scales near 1.
  const double w = 0.02 * std::sqrt(3.0);
  w_qkv_.resize(h_, 3 * h_);
  w_o_.resize(h_, h_);
  w_1_.resize(h_, f_);
  w_2_.resize(f_, h_);
  b_qkv_.resize(1, 3 * h_);
  b_o_.resize(1, h_);
  b_1_.resize(1, f_);
  b_2_.resize(1, h_);
  g_1_.resize(1, h_);
  beta_1_.resize(1, h_);
  g_2_.resize(1, h_);
  beta_2_.resize(1, h_);
  for (Matrix* m : {&w_qkv_, &w_o_, &w_1_, &w_2_}) Fill(*m, rng, w);
  for (Matrix* m : {&b_qkv_, &b_o_, &b_1_, &b_2_, &beta_1_, &beta_2_}) Fill(*m, rng, 0.01);
  for (Matrix* m : {&g_1_, &g_2_}) Fill(*m, rng, 0.1, 1.0);
  const auto tokens = static_cast<std::size_t>(t_ * h_);
  mask_att_ = Mask(static_cast<std::size_t>(b_ * a_ * s_ * s_), shape.dropout, rng);
  mask_r1_ = Mask(tokens, shape.dropout, rng);
  mask_r2_ = Mask(tokens, shape.dropout, rng);

  x_.resize(t_, h_);
  Fill(x_, rng, 1.0);
  dout_.resize(t_, h_);
  Fill(dout_, rng, 1.0);
  for (Matrix* m : {&xhat1_, &y1_, &o_, &attn_, &x2_, &xhat2_, &y2_, &dn_, &out_, &dy2_, &dx2_,
                    &d_attn_, &d_o_, &dy1_, &dx_, &d_dn_})
    m->resize(t_, h_);
  qkv_.resize(t_, 3 * h_);
  d_qkv_.resize(t_, 3 * h_);
  for (Matrix* m : {&u_, &g_, &dg_, &du_}) m->resize(t_, f_);
  for (Matrix* m : {&p_, &pd_, &d_pd_, &d_s_}) m->resize(b_ * a_ * s_, s_);
  rstd1_.resize(t_);
  rstd2_.resize(t_);
}

namespace {

// y = LN(x) * g + beta (Ba, Kiros & Hinton 2016, Eq. 4); saves xhat and 1/sigma.
template <class M, class V>
void LayerNormForward(const M& x, const M& g, const M& beta, M& xhat, V& rstd, M& y) {
  using S = typename M::Scalar;
  const Index rows = x.rows();
  ORRERY_OMP_FOR for (Index r = 0; r < rows; ++r) {
    const auto xr = x.row(r);
    const S mean = xr.mean();
    const S var = (xr.array() - mean).square().mean();
    const S rs = S(1) / std::sqrt(var + static_cast<S>(kLayerNormEps));
    rstd(r) = rs;
    xhat.row(r) = (xr.array() - mean) * rs;
    y.row(r) = xhat.row(r).array() * g.row(0).array() + beta.row(0).array();
  }
}

// dx = (1/sigma) (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dxhat = dy g;
// dx is added to `dx_acc` when `accumulate`. dg, dbeta: column sums.
template <class M, class V>
void LayerNormBackward(const M& dy, const M& xhat, const V& rstd, const M& g, M& dx, bool accumulate,
                       const M& dx_base, M& dg, M& dbeta) {
  using S = typename M::Scalar;
  const Index rows = dy.rows();
  const S inv_h = S(1) / static_cast<S>(dy.cols());
  ORRERY_OMP_FOR for (Index r = 0; r < rows; ++r) {
    const auto dxhat = (dy.row(r).array() * g.row(0).array()).eval();
    const S m1 = dxhat.sum() * inv_h;
    const S m2 = (dxhat * xhat.row(r).array()).sum() * inv_h;
    const auto grad = (rstd(r) * (dxhat - m1 - xhat.row(r).array() * m2)).eval();
    if (accumulate) {
      dx.row(r) = dx_base.row(r).array() + grad;
    } else {
      dx.row(r) = grad;
    }
  }
  dg = (dy.array() * xhat.array()).colwise().sum();
  dbeta = dy.colwise().sum();
}

}  // namespace

template <class Scalar>
void CpuLayer<Scalar>::Forward() {
  Clock clock(fwd_stages_, stage_clock_);
  const Scalar inv_sqrt_d = static_cast<Scalar>(1.0 / std::sqrt(static_cast<double>(d_)));
  const Scalar scale = scale_;
  // input_norm
  LayerNormForward(x_, g_1_, beta_1_, xhat1_, rstd1_, y1_);
  clock.Other();
  // qkv_proj (bias in the GEMM's C operand, as addmm does)
  qkv_ = b_qkv_.replicate(t_, 1);
  qkv_.noalias() += y1_ * w_qkv_;
  clock.Gemm();
  // attention_scores: b*a GEMMs of s x s x d
  for (Index bi = 0; bi < b_; ++bi)
    for (Index hi = 0; hi < a_; ++hi)
      p_.block((bi * a_ + hi) * s_, 0, s_, s_).noalias() =
          qkv_.block(bi * s_, hi * d_, s_, d_) * qkv_.block(bi * s_, h_ + hi * d_, s_, d_).transpose();
  clock.Gemm();
  // softmax (scaled, causal: row i of a sequence sees keys 0..i)
  const Index score_rows = p_.rows();
  ORRERY_OMP_FOR for (Index r = 0; r < score_rows; ++r) {
    const Index i = r % s_;
    auto row = p_.row(r);
    auto valid = row.head(i + 1);
    const Scalar mx = valid.maxCoeff() * inv_sqrt_d;
    valid = (valid.array() * inv_sqrt_d - mx).exp().matrix();
    valid *= Scalar(1) / valid.sum();
    row.tail(s_ - i - 1).setZero();
  }
  clock.Other();
  // attention_dropout
  ORRERY_OMP_FOR for (Index r = 0; r < score_rows; ++r) {
    const std::uint8_t* m = mask_att_.data() + r * s_;
    for (Index c = 0; c < s_; ++c) pd_(r, c) = m[c] ? p_(r, c) * scale : Scalar(0);
  }
  clock.Other();
  // attention_over_values: b*a GEMMs of s x d x s
  for (Index bi = 0; bi < b_; ++bi)
    for (Index hi = 0; hi < a_; ++hi)
      o_.block(bi * s_, hi * d_, s_, d_).noalias() =
          pd_.block((bi * a_ + hi) * s_, 0, s_, s_) * qkv_.block(bi * s_, 2 * h_ + hi * d_, s_, d_);
  clock.Gemm();
  // out_proj
  attn_.noalias() = o_ * w_o_;
  clock.Gemm();
  // dropout_residual (bias, dropout and residual add fused, as in Megatron)
  ORRERY_OMP_FOR for (Index r = 0; r < t_; ++r) {
    const std::uint8_t* m = mask_r1_.data() + r * h_;
    for (Index c = 0; c < h_; ++c)
      x2_(r, c) = x_(r, c) + (m[c] ? (attn_(r, c) + b_o_(0, c)) * scale : Scalar(0));
  }
  clock.Other();
  // post_attention_norm
  LayerNormForward(x2_, g_2_, beta_2_, xhat2_, rstd2_, y2_);
  clock.Other();
  // mlp_up
  u_.noalias() = y2_ * w_1_;
  clock.Gemm();
  // gelu (with the up-projection's bias, fused)
  ORRERY_OMP_FOR for (Index r = 0; r < t_; ++r) {
    const auto z = (u_.row(r).array() + b_1_.row(0).array()).eval();
    g_.row(r) = Scalar(0.5) * z *
                (Scalar(1) + (static_cast<Scalar>(kGeluC) * (z + static_cast<Scalar>(kGeluK) * z.cube())).tanh());
  }
  clock.Other();
  // mlp_down
  dn_.noalias() = g_ * w_2_;
  clock.Gemm();
  // dropout_residual
  ORRERY_OMP_FOR for (Index r = 0; r < t_; ++r) {
    const std::uint8_t* m = mask_r2_.data() + r * h_;
    for (Index c = 0; c < h_; ++c)
      out_(r, c) = x2_(r, c) + (m[c] ? (dn_(r, c) + b_2_(0, c)) * scale : Scalar(0));
  }
  clock.Other();
}

template <class Scalar>
void CpuLayer<Scalar>::Backward() {
  Clock clock(bwd_stages_, stage_clock_);
  const Scalar inv_sqrt_d = static_cast<Scalar>(1.0 / std::sqrt(static_cast<double>(d_)));
  const Scalar scale = scale_;
  // dropout_residual (second): the residual passes dout through to x2.
  ORRERY_OMP_FOR for (Index r = 0; r < t_; ++r) {
    const std::uint8_t* m = mask_r2_.data() + r * h_;
    for (Index c = 0; c < h_; ++c) d_dn_(r, c) = m[c] ? dout_(r, c) * scale : Scalar(0);
  }
  db_2_ = d_dn_.colwise().sum();
  clock.Other();
  // mlp_down: weight and input gradients
  dw_2_.noalias() = g_.transpose() * d_dn_;
  dg_.noalias() = d_dn_ * w_2_.transpose();
  clock.Gemm();
  // gelu: d/dz [0.5 z (1 + tanh(c(z + k z^3)))]
  //     = 0.5 (1 + t) + 0.5 z (1 - t^2) c (1 + 3 k z^2)
  ORRERY_OMP_FOR for (Index r = 0; r < t_; ++r) {
    const auto z = (u_.row(r).array() + b_1_.row(0).array()).eval();
    const auto th = (static_cast<Scalar>(kGeluC) * (z + static_cast<Scalar>(kGeluK) * z.cube())).tanh().eval();
    du_.row(r) = dg_.row(r).array() *
                 (Scalar(0.5) * (Scalar(1) + th) +
                  Scalar(0.5) * z * (Scalar(1) - th.square()) * static_cast<Scalar>(kGeluC) *
                      (Scalar(1) + static_cast<Scalar>(3 * kGeluK) * z.square()));
  }
  db_1_ = du_.colwise().sum();
  clock.Other();
  // mlp_up
  dw_1_.noalias() = y2_.transpose() * du_;
  dy2_.noalias() = du_ * w_1_.transpose();
  clock.Gemm();
  // post_attention_norm, plus the residual gradient dout
  LayerNormBackward(dy2_, xhat2_, rstd2_, g_2_, dx2_, true, dout_, dg_2_, dbeta_2_);
  clock.Other();
  // dropout_residual (first)
  ORRERY_OMP_FOR for (Index r = 0; r < t_; ++r) {
    const std::uint8_t* m = mask_r1_.data() + r * h_;
    for (Index c = 0; c < h_; ++c) d_attn_(r, c) = m[c] ? dx2_(r, c) * scale : Scalar(0);
  }
  db_o_ = d_attn_.colwise().sum();
  clock.Other();
  // out_proj
  dw_o_.noalias() = o_.transpose() * d_attn_;
  d_o_.noalias() = d_attn_ * w_o_.transpose();
  clock.Gemm();
  // attention_over_values: dPd = dO V^T, dV = Pd^T dO
  for (Index bi = 0; bi < b_; ++bi) {
    for (Index hi = 0; hi < a_; ++hi) {
      const auto d_oh = d_o_.block(bi * s_, hi * d_, s_, d_);
      const Index pr = (bi * a_ + hi) * s_;
      d_pd_.block(pr, 0, s_, s_).noalias() = d_oh * qkv_.block(bi * s_, 2 * h_ + hi * d_, s_, d_).transpose();
      d_qkv_.block(bi * s_, 2 * h_ + hi * d_, s_, d_).noalias() = pd_.block(pr, 0, s_, s_).transpose() * d_oh;
    }
  }
  clock.Gemm();
  // attention_dropout and softmax: dS = P (dP - rowsum(dP P)) / sqrt(d)
  const Index score_rows = p_.rows();
  ORRERY_OMP_FOR for (Index r = 0; r < score_rows; ++r) {
    const std::uint8_t* m = mask_att_.data() + r * s_;
    for (Index c = 0; c < s_; ++c) d_s_(r, c) = m[c] ? d_pd_(r, c) * scale : Scalar(0);
    const Scalar dot = (d_s_.row(r).array() * p_.row(r).array()).sum();
    d_s_.row(r) = p_.row(r).array() * (d_s_.row(r).array() - dot) * inv_sqrt_d;
  }
  clock.Other();
  // attention_scores: dQ = dS K, dK = dS^T Q
  for (Index bi = 0; bi < b_; ++bi) {
    for (Index hi = 0; hi < a_; ++hi) {
      const auto ds = d_s_.block((bi * a_ + hi) * s_, 0, s_, s_);
      d_qkv_.block(bi * s_, hi * d_, s_, d_).noalias() = ds * qkv_.block(bi * s_, h_ + hi * d_, s_, d_);
      d_qkv_.block(bi * s_, h_ + hi * d_, s_, d_).noalias() = ds.transpose() * qkv_.block(bi * s_, hi * d_, s_, d_);
    }
  }
  clock.Gemm();
  db_qkv_ = d_qkv_.colwise().sum();
  clock.Other();
  // qkv_proj
  dw_qkv_.noalias() = y1_.transpose() * d_qkv_;
  dy1_.noalias() = d_qkv_ * w_qkv_.transpose();
  clock.Gemm();
  // input_norm, plus the residual gradient dx2
  LayerNormBackward(dy1_, xhat1_, rstd1_, g_1_, dx_, true, dx2_, dg_1_, dbeta_1_);
  clock.Other();
}

template <class Scalar>
std::vector<std::pair<std::string, typename CpuLayer<Scalar>::Matrix*>> CpuLayer<Scalar>::Parameters() {
  return {{"w_qkv", &w_qkv_}, {"b_qkv", &b_qkv_}, {"w_o", &w_o_},       {"b_o", &b_o_},
          {"w_1", &w_1_},     {"b_1", &b_1_},     {"w_2", &w_2_},       {"b_2", &b_2_},
          {"ln1_g", &g_1_},   {"ln1_b", &beta_1_}, {"ln2_g", &g_2_},    {"ln2_b", &beta_2_}};
}

template <class Scalar>
std::vector<std::pair<std::string, const typename CpuLayer<Scalar>::Matrix*>>
CpuLayer<Scalar>::Gradients() const {
  return {{"w_qkv", &dw_qkv_}, {"b_qkv", &db_qkv_}, {"w_o", &dw_o_},      {"b_o", &db_o_},
          {"w_1", &dw_1_},     {"b_1", &db_1_},     {"w_2", &dw_2_},      {"b_2", &db_2_},
          {"ln1_g", &dg_1_},   {"ln1_b", &dbeta_1_}, {"ln2_g", &dg_2_},   {"ln2_b", &dbeta_2_}};
}

template class CpuLayer<float>;
template class CpuLayer<double>;

int SetCpuThreads(int threads) {
  int n = threads;
  if (n <= 0) {
    const unsigned hw = std::thread::hardware_concurrency();
    n = hw > 0 ? static_cast<int>(hw) : 1;
  }
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  Eigen::setNbThreads(n);
  return n;
}

CpuLayerTiming TimeCpuLayer(const CpuLayerShape& shape, const CpuLayerTimingOptions& o) {
  SetCpuThreads(o.threads);
  CpuLayer<float> layer(shape, 0x5eed);
  layer.set_stage_clock(o.clock);
  CpuLayerTiming out;
  StageTimes fwd, bwd;
  std::int64_t inner = 1;
  // Stages are counted over every call, warm-ups included; only shares are used.
  layer.set_forward_stages(&fwd);
  const auto f =
      calibration::TimeRepeated([&] { layer.Forward(); }, o.warmups, o.reps, o.min_sample_s, &inner, o.clock);
  layer.set_forward_stages(nullptr);
  layer.Forward();
  layer.set_backward_stages(&bwd);
  const auto b =
      calibration::TimeRepeated([&] { layer.Backward(); }, o.warmups, o.reps, o.min_sample_s, &inner, o.clock);
  layer.set_backward_stages(nullptr);
  const calibration::SampleSummary fs = calibration::Summarize(f);
  const calibration::SampleSummary bs = calibration::Summarize(b);
  out.forward_median_s = fs.median;
  out.forward_min_s = fs.min;
  out.backward_median_s = bs.median;
  out.backward_min_s = bs.min;
  out.forward_calls = fwd.calls;
  out.backward_calls = bwd.calls;
  if (fwd.gemm_s + fwd.other_s > 0) out.forward_gemm_share = fwd.gemm_s / (fwd.gemm_s + fwd.other_s);
  if (bwd.gemm_s + bwd.other_s > 0) out.backward_gemm_share = bwd.gemm_s / (bwd.gemm_s + bwd.other_s);
  return out;
}

}  // namespace orrery::validation
