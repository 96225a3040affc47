#include "core/hetero/hetero.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <utility>

#include "hardware/device_model.h"
#include "models/transformer.h"

namespace orrery::hetero {

using parallelism::HeteroSplit;

double PipelineTime(const std::vector<double>& stage_s, int64_t microbatches) {
  if (stage_s.empty()) return 0;
  const double sum = std::accumulate(stage_s.begin(), stage_s.end(), 0.0);
  const double slowest = *std::max_element(stage_s.begin(), stage_s.end());
  return sum + static_cast<double>(std::max<int64_t>(0, microbatches - 1)) * slowest;
}

std::vector<double> StageTimes(const std::vector<StageCosts>& pools, const std::vector<int64_t>& layers,
                               std::vector<size_t>* stage_pool) {
  std::vector<double> out;
  if (stage_pool != nullptr) stage_pool->clear();
  const size_t P = std::min(pools.size(), layers.size());
  for (size_t g = 0; g < P; ++g) {
    const StageCosts& c = pools[g];
    const int64_t S = std::max<int64_t>(1, c.stages), L = layers[g];
    for (int64_t j = 0; j < S; ++j) {
      const int64_t l = L / S + (j < L % S ? 1 : 0);
      const bool first = g == 0 && j == 0;
      const bool last = g + 1 == P && j + 1 == S;
      double ts = static_cast<double>(l) * c.layer_s;
      if (first) ts += c.embed_s;
      if (last) ts += c.head_s;
      if (!last) ts += 2 * (j + 1 < S ? c.send_s : c.boundary_s);
      out.push_back(ts);
      if (stage_pool != nullptr) stage_pool->push_back(g);
    }
  }
  return out;
}

hardware::SystemSpec PoolSystem(const hardware::SystemSpec& s, size_t g) {
  hardware::SystemSpec out = s;
  out.pools.clear();
  if (g == 0 || g > s.pools.size()) return out;
  const hardware::DevicePool& p = s.pools[g - 1];
  out.device = p.device;
  out.device_preset = p.device_preset;
  out.nodes = p.nodes;
  if (p.devices_per_node > 0) out.devices_per_node = p.devices_per_node;
  if (p.price_per_device_hour > 0) out.price_per_device_hour = p.price_per_device_hour;
  // The pool's nodes keep their own scale-up fabric: an innermost tier of
  // one node runs at the pool device's scale-up bandwidth (NVLink of its
  // generation), the rest of the network is shared.
  if (!out.network.empty() && out.network[0].domain == out.devices_per_node && s.device.scaleup_bandwidth > 0 &&
      p.device.scaleup_bandwidth > 0)
    out.network[0].bandwidth = p.device.scaleup_bandwidth;
  return out;
}

std::string PoolName(const hardware::SystemSpec& s, size_t g) {
  if (g == 0) return s.device_preset.empty() ? s.device.name : s.device_preset;
  if (g > s.pools.size()) return "?";
  const hardware::DevicePool& p = s.pools[g - 1];
  if (!p.name.empty()) return p.name;
  return p.device_preset.empty() ? p.device.name : p.device_preset;
}


double FacilityEnergy(double devices, double tdp_w, double idle_w, double pue, double busy_s,
                      double iteration_s) {
  const double busy = std::clamp(busy_s, 0.0, iteration_s);
  return pue * devices * (tdp_w * busy + idle_w * (iteration_s - busy));
}

namespace {

double PoolBandwidth(const hardware::SystemSpec& s) {
  if (s.pool_bandwidth > 0) return s.pool_bandwidth;
  return s.network.empty() ? 0 : s.network.back().bandwidth;
}

// The homogeneous scenario of pool g: its system, and the model or batch
// share it runs.
engine::Scenario PoolScenario(const engine::Scenario& s, size_t g) {
  engine::Scenario one = s;
  one.system = PoolSystem(s.system, g);
  one.hetero = {};
  return one;
}

// One pool's share costed by the estimator: the run (memory, feasibility,
// sync and optimizer) and, for the pipeline split, one layer's time.
struct PoolRun {
  bool ok = false;
  std::string reason;
  engine::TrainingEstimate e;
  engine::OperatorCosts c;
  double layer_s = 0;  // one layer per microbatch: fwd + bwd + recompute + exposed TP/CP/EP
};

// Seconds of one layer for one microbatch on one device, from the costs the
// closed form is built from (TrainingEstimator::Costs), its exposed TP, CP
// and EP collectives included.
double LayerSeconds(const engine::OperatorCosts& c, const parallelism::TrainingPlan& p) {
  const double f = c.moe_fraction;
  double t = (1 - f) * (c.dense.fwd + c.dense.bwd) + f * (c.moe.fwd + c.moe.bwd + c.ep_layer);
  t += c.tp_fwd + c.tp_bwd + c.cp_fwd + c.cp_bwd;
  // Full recompute: the recomputed share of the layers (all, or every
  // recompute_interval-th, parallelism::FullRecomputeShare) runs its forward again.
  if (p.recompute == parallelism::Recompute::kFull)
    t += parallelism::FullRecomputeShare(p) *
         ((1 - f) * c.dense.fwd + f * c.moe.fwd + c.tp_rec -
          (p.checkpoint_early_stop ? (1 - f) * c.dense.early_stop_fwd + f * c.moe.early_stop_fwd : 0.0));
  else if (p.recompute == parallelism::Recompute::kSelective)
    t += (1 - f) * c.dense.attention_fwd + f * c.moe.attention_fwd;
  else if (p.recompute == parallelism::Recompute::kOp)  // torchtitan's op-level SAC (models::LayerOps)
    t += (1 - f) * c.dense.op_sac_fwd + f * c.moe.op_sac_fwd + c.tp_rec;
  return t;
}

std::string Share(const char* what, const std::vector<int64_t>& v) {
  return std::string(what) + " " + parallelism::CountListText(v);
}

// Naive split: `total` in proportion to `weights`, each entry a multiple
// of `step[g]`; what is left goes a step at a time to the pools in order,
// and a rest no step divides to pool 0 (the pool's check then reports it).
std::vector<int64_t> Proportional(int64_t total, const std::vector<int64_t>& weights,
                                  const std::vector<int64_t>& step) {
  const int64_t wsum = std::accumulate(weights.begin(), weights.end(), int64_t{0});
  std::vector<int64_t> out(weights.size(), 0);
  int64_t left = total;
  for (size_t g = 0; g < weights.size(); ++g) {
    const int64_t st = std::max<int64_t>(1, step[g]);
    out[g] = wsum > 0 ? total * weights[g] / wsum / st * st : 0;
    left -= out[g];
  }
  for (bool moved = true; left > 0 && moved;) {
    moved = false;
    for (size_t g = 0; g < out.size() && left > 0; ++g) {
      const int64_t st = std::max<int64_t>(1, step[g]);
      if (st <= left) {
        out[g] += st;
        left -= st;
        moved = true;
      }
    }
  }
  if (left > 0 && !out.empty()) out[0] += left;
  return out;
}

// The parts every split of a scenario shares: pool systems and degrees.
struct Setup {
  std::string problem;  // non-empty: no split can run
  HeteroSplit split = HeteroSplit::kPipeline;
  size_t pools = 0;
  std::vector<engine::Scenario> scen;  // per pool, homogeneous
  std::vector<std::unique_ptr<engine::TrainingEstimator>> est;
  std::vector<int64_t> devices;
  std::vector<int64_t> stages;  // pipeline: per pool
  std::vector<int64_t> dp;      // per pool (pipeline: all equal)
  std::vector<int64_t> step;    // the unit of a share: 1 layer, or dp x micro_batch sequences
  int64_t total = 0;            // layers or global batch
  int64_t microbatches = 0;     // pipeline
};

Setup MakeSetup(const engine::Scenario& s, HeteroSplit split) {
  Setup u;
  u.split = split;
  u.pools = PoolCount(s.system);
  const auto& t = s.training;
  const int64_t inner = t.tp * t.cp;
  int64_t all = 0;
  for (size_t g = 0; g < u.pools; ++g) {
    u.scen.push_back(PoolScenario(s, g));
    u.scen.back().training.interleave = 1;
    u.scen.back().training.first_stage_layers = 0;
    u.scen.back().training.last_stage_layers = 0;
    u.devices.push_back(hardware::DeviceCount(u.scen.back().system));
    all += u.devices.back();
  }
  if (split == HeteroSplit::kPipeline) {
    // dp from the plan, or from pp as the total number of stages.
    int64_t dp = t.dp;
    if (dp <= 0) dp = inner * t.pp > 0 && all % (inner * t.pp) == 0 ? all / (inner * t.pp) : 0;
    if (dp <= 0) {
      u.problem = "tp x cp x pp (" + std::to_string(inner * t.pp) + ") must divide the " +
                  std::to_string(all) + " devices of all pools (pp counts the stages of every pool)";
      return u;
    }
    int64_t stages = 0;
    for (size_t g = 0; g < u.pools; ++g) {
      if (u.devices[g] % (inner * dp) != 0) {
        u.problem = "pool " + std::to_string(g) + " (" + PoolName(s.system, g) + ", " +
                    std::to_string(u.devices[g]) + " devices) is not a whole number of stages of tp x "
                    "cp x dp = " + std::to_string(inner * dp) + " devices";
        return u;
      }
      u.stages.push_back(u.devices[g] / (inner * dp));
      u.dp.push_back(dp);
      u.step.push_back(1);
      stages += u.stages.back();
    }
    if (stages != t.pp) {
      u.problem = "the pools hold " + std::to_string(stages) + " stages of tp x cp x dp = " +
                  std::to_string(inner * dp) + " devices, the plan's pp is " + std::to_string(t.pp);
      return u;
    }
    if (s.workload.global_batch % (dp * t.micro_batch) != 0) {
      u.problem = "global batch " + std::to_string(s.workload.global_batch) +
                  " is not a multiple of dp x micro_batch (" + std::to_string(dp * t.micro_batch) + ")";
      return u;
    }
    u.microbatches = s.workload.global_batch / (dp * t.micro_batch);
    u.total = s.model.layers;
  } else {
    if (t.dp > 0) {
      u.problem = "a data split fills each pool with data parallelism; training.dp = " +
                  std::to_string(t.dp) + " would fix it across pools (set training.dp=0)";
      return u;
    }
    for (size_t g = 0; g < u.pools; ++g) {
      const int64_t rep = inner * t.pp;
      if (u.devices[g] % rep != 0) {
        u.problem = "pool " + std::to_string(g) + " (" + PoolName(s.system, g) + ", " +
                    std::to_string(u.devices[g]) + " devices) is not a whole number of replicas of tp x "
                    "cp x pp = " + std::to_string(rep) + " devices";
        return u;
      }
      u.stages.push_back(t.pp);
      u.dp.push_back(u.devices[g] / rep);
      u.step.push_back(u.dp.back() * t.micro_batch);
      u.scen[g].training.dp = 0;  // fills the pool
    }
    u.total = s.workload.global_batch;
  }
  for (size_t g = 0; g < u.pools; ++g) {
    u.scen[g].training.pp = u.stages[g];
    if (split == HeteroSplit::kPipeline) u.scen[g].training.dp = u.dp[g];
    u.est.push_back(std::make_unique<engine::TrainingEstimator>(u.scen[g].model, u.scen[g].system));
  }
  return u;
}

// Pool g running `share` (layers or sequences).
PoolRun RunPool(const Setup& u, size_t g, int64_t share) {
  PoolRun r;
  engine::Scenario one = u.scen[g];
  const parallelism::TrainingPlan& p = one.training;
  if (u.split == HeteroSplit::kPipeline) {
    if (share < u.stages[g]) {
      r.reason = std::to_string(share) + " layers for " + std::to_string(u.stages[g]) + " stages";
      return r;
    }
    one.model.layers = share;
    const engine::TrainingEstimator est(one.model, one.system);
    r.e = est.Run(p, one.workload);
    if (!r.e.feasible()) {
      r.reason = engine::ExplainInfeasible(r.e, one);
      return r;
    }
    r.c = est.Costs(p, one.workload);
    r.layer_s = LayerSeconds(r.c, p);
  } else {
    if (share % u.step[g] != 0) {
      r.reason = std::to_string(share) + " sequences are not a multiple of dp x micro_batch (" +
                 std::to_string(u.step[g]) + ")";
      return r;
    }
    one.workload.global_batch = share;
    r.e = u.est[g]->Run(p, one.workload);
    if (!r.e.feasible()) {
      r.reason = engine::ExplainInfeasible(r.e, one);
      return r;
    }
    r.c = u.est[g]->Costs(p, one.workload);
  }
  r.ok = true;
  return r;
}

Result Combine(const engine::Scenario& s, const Setup& u, const std::vector<int64_t>& shares,
               const std::vector<const PoolRun*>& runs) {
  Result r;
  r.split = u.split;
  const size_t P = u.pools;
  const double pue = s.system.pue;
  const auto& t = s.training;
  const double tokens = static_cast<double>(s.workload.global_batch) * static_cast<double>(s.workload.seq_len);
  for (size_t g = 0; g < P; ++g) {
    PoolResult pr;
    pr.name = PoolName(s.system, g);
    pr.device = u.scen[g].system.device.name;
    pr.devices = u.devices[g];
    pr.stages = u.stages[g];
    pr.dp = u.dp[g];
    pr.estimate = runs[g]->e;
    r.pools.push_back(pr);
  }
  if (u.split == HeteroSplit::kPipeline) {
    r.layers = shares;
    r.microbatches = u.microbatches;
    const double bw = PoolBandwidth(s.system);
    std::vector<StageCosts> sc(P);
    double sync = 0;
    int64_t first = 0;
    for (size_t g = 0; g < P; ++g) {
      const PoolRun& pr = *runs[g];
      sc[g].stages = u.stages[g];
      sc[g].layer_s = pr.layer_s;
      sc[g].embed_s = pr.c.embed.fwd + pr.c.embed.bwd;
      sc[g].head_s = pr.c.head.fwd + pr.c.head.bwd;
      sc[g].send_s = pr.c.p2p;
      // The activation crossing to the next pool: micro_batch x seq / cp
      // tokens x hidden x bytes, split over tp.
      const double bytes =
          pr.c.tokens * static_cast<double>(s.model.hidden) * pr.c.act_bytes / static_cast<double>(t.tp);
      sc[g].boundary_s = bw > 0 ? bytes / bw : 0;
      if (g + 1 < P) r.cross_pool_s = std::max(r.cross_pool_s, sc[g].boundary_s);
      r.pools[g].first_layer = first;
      r.pools[g].layers = shares[g];
      first += shares[g];
      // The pool's gradient sync and optimizer step as the estimator costs
      // them for its own stages (its run on its layers).
      sync = std::max(sync, pr.e.time.dp_comm + pr.e.time.optimizer);
    }
    std::vector<size_t> stage_pool;
    const std::vector<double> stage_s = StageTimes(sc, shares, &stage_pool);
    for (size_t i = 0; i < stage_s.size(); ++i)
      r.pools[stage_pool[i]].stage_s = std::max(r.pools[stage_pool[i]].stage_s, stage_s[i]);
    r.pipeline_s = PipelineTime(stage_s, u.microbatches);
    r.sync_s = sync;
    r.iteration_s = r.pipeline_s + r.sync_s;
    const double m = static_cast<double>(u.microbatches);
    for (size_t i = 0; i < stage_s.size(); ++i) {
      const size_t g = stage_pool[i];
      const PoolRun& pr = *runs[g];
      const double busy = m * stage_s[i] + pr.e.time.dp_comm + pr.e.time.optimizer;
      const double n = static_cast<double>(t.tp * t.cp * u.dp[g]);  // devices of one stage
      const auto& dev = u.scen[g].system.device;
      r.pools[g].busy_s += std::min(busy, r.iteration_s) * n;
      r.pools[g].energy_j += FacilityEnergy(n, hardware::BusyPower(dev), IdlePower(dev), pue, busy, r.iteration_s);
    }
    for (size_t g = 0; g < P; ++g) {
      r.pools[g].busy_s /= static_cast<double>(u.devices[g]);
      r.pools[g].own_s = m * r.pools[g].stage_s + runs[g]->e.time.dp_comm + runs[g]->e.time.optimizer;
    }
  } else {
    r.batch = shares;
    double slowest = 0;
    for (size_t g = 0; g < P; ++g) slowest = std::max(slowest, runs[g]->e.iteration_s);
    // Gradient bytes of one device: a stage's parameters (the average stage)
    // at the gradient precision.
    const engine::OperatorCosts& c = runs[0]->c;
    const double grad = (static_cast<double>(s.model.layers) * c.layer_params + c.embed_params + c.head_params) /
                        static_cast<double>(t.pp) * c.grad_bytes;
    const double bw = PoolBandwidth(s.system);
    const double pd = static_cast<double>(P);
    r.cross_pool_s = bw > 0 && P > 1 ? 2 * (pd - 1) / pd * grad / bw : 0;
    r.iteration_s = slowest + r.cross_pool_s;
    for (size_t g = 0; g < P; ++g) {
      const engine::TrainingEstimate& e = runs[g]->e;
      PoolResult& pr = r.pools[g];
      pr.batch = shares[g];
      pr.own_s = e.iteration_s;
      // Busy: the pool's own iteration less its pipeline bubble, and the
      // cross-pool all-reduce; idle: the bubble and the wait for the slowest pool.
      pr.busy_s = e.iteration_s - e.time.pp_bubble + r.cross_pool_s;
      const auto& dev = u.scen[g].system.device;
      const double n = static_cast<double>(u.devices[g]);
      pr.energy_j = FacilityEnergy(n, hardware::BusyPower(dev), IdlePower(dev), pue, pr.busy_s, r.iteration_s);
    }
  }
  for (size_t g = 0; g < P; ++g) {
    PoolResult& pr = r.pools[g];
    pr.idle_s = r.iteration_s - pr.busy_s;
    pr.idle_fraction = r.iteration_s > 0 ? pr.idle_s / r.iteration_s : 0;
    const auto& sys = u.scen[g].system;
    const double n = static_cast<double>(u.devices[g]);
    r.energy_j += pr.energy_j;
    r.energy_at_tdp_j += pue * n * sys.device.tdp * r.iteration_s;
    r.cost_usd += n * sys.price_per_device_hour * r.iteration_s;
  }
  r.tokens_per_s = r.iteration_s > 0 ? tokens / r.iteration_s : 0;
  r.feasible = true;
  return r;
}

double Score(const Result& r, SplitObjective o) {
  switch (o) {
    case SplitObjective::kTime: return r.iteration_s;
    case SplitObjective::kEnergy: return r.energy_j;
    case SplitObjective::kCost: return r.cost_usd;
  }
  return r.iteration_s;
}

// Checks a split's shape against the setup; "" when it fits.
std::string ShapeProblem(const Setup& u, const std::vector<int64_t>& shares) {
  const char* what = u.split == HeteroSplit::kPipeline ? "layers" : "batch";
  if (shares.size() != u.pools)
    return Share(what, shares) + ": one entry per pool needed (" + std::to_string(u.pools) + ")";
  if (std::accumulate(shares.begin(), shares.end(), int64_t{0}) != u.total)
    return Share(what, shares) + " does not add up to " + std::to_string(u.total);
  return {};
}

}  // namespace

Result EvaluateSplit(const engine::Scenario& s, HeteroSplit split, const std::vector<int64_t>& shares) {
  Result r;
  r.split = split;
  const Setup u = MakeSetup(s, split);
  if (!u.problem.empty()) {
    r.reason = u.problem;
    return r;
  }
  if (std::string why = ShapeProblem(u, shares); !why.empty()) {
    r.reason = why;
    return r;
  }
  std::vector<PoolRun> runs;
  std::vector<const PoolRun*> ptr;
  for (size_t g = 0; g < u.pools; ++g) runs.push_back(RunPool(u, g, shares[g]));
  for (size_t g = 0; g < u.pools; ++g) {
    if (!runs[g].ok) {
      r.reason = "pool " + std::to_string(g) + " (" + PoolName(s.system, g) + "): " + runs[g].reason;
      if (split == HeteroSplit::kPipeline) r.layers = shares;
      else r.batch = shares;
      return r;
    }
    ptr.push_back(&runs[g]);
  }
  return Combine(s, u, shares, ptr);
}

namespace {

std::vector<int64_t> NaiveShares(const engine::Scenario& s, const Setup& u) {
  if (u.split == HeteroSplit::kPipeline) return Proportional(s.model.layers, u.stages, u.step);
  return Proportional(s.workload.global_batch, u.devices, u.step);
}

}  // namespace

Result Evaluate(const engine::Scenario& s) {
  const HeteroSplit split = s.hetero.split;
  const std::string& text = split == HeteroSplit::kPipeline ? s.hetero.layers : s.hetero.batch;
  std::vector<int64_t> shares;
  std::string why;
  if (!parallelism::ParseCountList(text, shares, why)) {
    Result r;
    r.split = split;
    r.reason = why;
    return r;
  }
  if (shares.empty()) {
    const Setup u = MakeSetup(s, split);
    if (!u.problem.empty()) {
      Result r;
      r.split = split;
      r.reason = u.problem;
      return r;
    }
    shares = NaiveShares(s, u);
  }
  return EvaluateSplit(s, split, shares);
}

SplitSearch SearchSplits(const engine::Scenario& s, SplitObjective objective, int top) {
  SplitSearch out;
  const HeteroSplit split = s.hetero.split;
  const Setup u = MakeSetup(s, split);
  if (!u.problem.empty()) {
    out.why_none = u.problem;
    out.naive.reason = u.problem;
    return out;
  }
  out.naive = EvaluateSplit(s, split, NaiveShares(s, u));
  // Each pool's run depends only on its own share: cost each (pool, share) once.
  std::vector<std::map<int64_t, PoolRun>> memo(u.pools);
  auto run = [&](size_t g, int64_t share) -> const PoolRun& {
    auto it = memo[g].find(share);
    if (it == memo[g].end()) it = memo[g].emplace(share, RunPool(u, g, share)).first;
    return it->second;
  };
  // The smallest share of each pool: a layer per stage, or one dp x micro_batch.
  std::vector<int64_t> lo(u.pools);
  for (size_t g = 0; g < u.pools; ++g) lo[g] = u.split == HeteroSplit::kPipeline ? u.stages[g] : u.step[g];
  std::vector<int64_t> shares(u.pools, 0);
  std::vector<std::pair<double, Result>> kept;  // (score, result) in enumeration order on ties
  std::string first_reason;
  // Enumerate shares[0..P-2] in steps; the last pool takes the rest.
  std::function<void(size_t, int64_t)> walk = [&](size_t g, int64_t left) {
    if (out.splits >= kMaxSplits) {
      out.truncated = true;
      return;
    }
    if (g + 1 == u.pools) {
      shares[g] = left;
      ++out.splits;
      std::vector<const PoolRun*> runs;
      for (size_t k = 0; k < u.pools; ++k) {
        const PoolRun& pr = run(k, shares[k]);
        if (!pr.ok) {
          if (first_reason.empty())
            first_reason = "pool " + std::to_string(k) + " (" + PoolName(s.system, k) + ") with " +
                           std::to_string(shares[k]) + ": " + pr.reason;
          return;
        }
        runs.push_back(&pr);
      }
      ++out.feasible;
      Result r = Combine(s, u, shares, runs);
      const double sc = Score(r, objective);
      auto pos = std::upper_bound(kept.begin(), kept.end(), sc,
                                  [](double v, const std::pair<double, Result>& e) { return v < e.first; });
      if (static_cast<int>(pos - kept.begin()) < top) {
        kept.insert(pos, {sc, std::move(r)});
        if (static_cast<int>(kept.size()) > top) kept.pop_back();
      }
      return;
    }
    int64_t rest_lo = 0;
    for (size_t k = g + 1; k < u.pools; ++k) rest_lo += lo[k];
    for (int64_t x = lo[g]; x + rest_lo <= left; x += u.step[g]) {
      shares[g] = x;
      walk(g + 1, left - x);
    }
  };
  walk(0, u.total);
  for (auto& [sc, r] : kept) out.top.push_back(std::move(r));
  if (out.top.empty())
    out.why_none = first_reason.empty() ? "no split of " + std::to_string(u.total) + " fits the pools"
                                        : "no split fits; e.g. " + first_reason;
  return out;
}

}  // namespace orrery::hetero
