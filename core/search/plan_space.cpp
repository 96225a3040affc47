#include "core/search/plan_space.h"

#include <algorithm>
#include <cstring>

namespace orrery::engine {

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> low, high;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

std::vector<PlanShape> EnumerateShapes(const models::ModelSpec& m, const parallelism::Workload& w,
                                       int64_t devices, const PlanSpaceOptions& o) {
  std::vector<PlanShape> out;
  if (devices < 1) return out;
  const std::vector<int64_t> experts =
      m.experts > 1 ? Divisors(m.experts) : std::vector<int64_t>{1};
  const FixedKnobs& f = o.fixed;
  for (int64_t tp : Divisors(devices)) {
    if (f.tp > 0 && tp != f.tp) continue;
    for (int64_t pp : Divisors(devices / tp)) {
      if (f.pp > 0 && pp != f.pp) continue;
      for (int64_t cp : Divisors(devices / (tp * pp))) {
        if (cp > 1 && !o.context_parallel && f.cp != cp) continue;
        if (f.cp > 0 && cp != f.cp) continue;
        const int64_t dp = devices / (tp * pp * cp);
        if (f.dp > 0 && dp != f.dp) continue;
        int64_t batch = w.global_batch;
        if (o.round_batch) batch = w.global_batch / dp * dp;
        if (batch <= 0 || batch % dp != 0) continue;
        for (int64_t ep : experts) {
          if (f.ep > 0 && ep != f.ep) continue;
          // Unfolded, EP groups are carved out of dp x cp; folded with etp =
          // 1 they take the tp devices too (plan_spec.h, ExpertTensorParallel).
          if ((dp * cp) % ep == 0 && (f.etp < 0 || f.etp == 0 || f.etp == tp)) {
            PlanShape s{devices, tp, pp, cp, ep, dp, 0, batch, o.uneven_stages, o.split_embedding_loss};
            if (f.etp == tp) s.etp = tp;
            out.push_back(s);
          }
          if (ep > 1 && tp > 1 && (tp * dp * cp) % ep == 0 && (f.etp < 0 || f.etp == 1))
            out.push_back(PlanShape{devices, tp, pp, cp, ep, dp, 1, batch, o.uneven_stages, o.split_embedding_loss});
        }
      }
    }
  }
  return out;
}

const char* DivisibilityProblem(const models::ModelSpec& m, const parallelism::Workload& w,
                                const PlanShape& s) {
  if (m.heads % s.tp != 0) return "tp does not divide the attention heads";
  const int64_t kv = models::KvHeads(m);
  if (kv % s.tp != 0 && s.tp % kv != 0) return "tp and the KV heads do not divide one another";
  if (models::FfnSize(m) % s.tp != 0) return "tp does not divide the MLP size";
  if (w.seq_len % s.cp != 0) return "cp does not divide the sequence length";
  if (m.experts % s.ep != 0) return "ep does not divide the experts";
  if (m.experts > 1 && s.etp > 0 && models::ExpertFfn(m) % s.etp != 0)
    return "etp does not divide the expert MLP size";
  const int64_t units = SplitUnits(m, s);
  if (units % s.pp != 0) {
    if (!s.uneven_stages)
      return units == m.layers ? "pp does not divide the layers"
                               : "pp does not divide the layers with the embedding and the loss";
    // ceil(units / pp) on every stage but the last, which must keep at least one.
    const int64_t per = (units + s.pp - 1) / s.pp;
    if (per * (s.pp - 1) >= units) return "pp leaves the last pipeline stage without layers";
  }
  return nullptr;
}

int64_t SplitUnits(const models::ModelSpec& m, const PlanShape& s) {
  return m.layers + (s.split_embedding_loss && s.pp > 1 ? 2 : 0);
}

namespace {

// The four placeable groups in their default order (innermost first); EP
// rides with whichever of cp and dp is laid first (training_estimator.cpp).
constexpr const char* kGroups[4] = {"tp", "cp", "dp", "pp"};

void WriteOrder(const std::array<int, 4>& perm, std::array<char, 16>& out) {
  std::string s;
  bool ep_written = false;
  for (int i = 0; i < 4; ++i) {
    if (!s.empty()) s += ',';
    s += kGroups[perm[static_cast<size_t>(i)]];
    if (!ep_written && (perm[static_cast<size_t>(i)] == 1 || perm[static_cast<size_t>(i)] == 2)) {
      s += ",ep";
      ep_written = true;
    }
  }
  out.fill(0);
  std::memcpy(out.data(), s.data(), std::min<size_t>(s.size(), out.size() - 1));
}

}  // namespace

GroupOrders OrdersFor(const PlanShape& s, bool all_orders) {
  GroupOrders g;
  const int64_t size[4] = {s.tp, s.cp, s.dp, s.pp};
  std::array<int, 4> perm{0, 1, 2, 3};
  if (!all_orders) {
    WriteOrder(perm, g.text[0]);
    g.count = 1;
    return g;
  }
  // Non-trivial groups first (permuted), then the size-1 groups in the
  // default order: their position changes no stride.
  std::array<int, 4> big{}, small{};
  int nb = 0, ns = 0;
  for (int i = 0; i < 4; ++i) {
    if (size[i] > 1) big[static_cast<size_t>(nb++)] = i;
    else small[static_cast<size_t>(ns++)] = i;
  }
  // `big` is ascending already: next_permutation starts from the identity.
  do {
    for (int i = 0; i < nb; ++i) perm[static_cast<size_t>(i)] = big[static_cast<size_t>(i)];
    for (int i = 0; i < ns; ++i) perm[static_cast<size_t>(nb) + static_cast<size_t>(i)] = small[static_cast<size_t>(i)];
    WriteOrder(perm, g.text[static_cast<size_t>(g.count++)]);
  } while (std::next_permutation(big.begin(), big.begin() + nb));
  return g;
}

uint64_t ShapeAxes::PerBlock(int64_t dp) const {
  uint64_t flags = 0;
  for (int z = zero_from; z < zero_from + zero; ++z) flags += static_cast<uint64_t>(DpOverlaps(dp, z));
  return flags * static_cast<uint64_t>(recomputes) * static_cast<uint64_t>(tp_overlap) *
         static_cast<uint64_t>(offload) * static_cast<uint64_t>(orders.count);
}

uint64_t ShapeAxes::Candidates(int64_t dp) const {
  return static_cast<uint64_t>(micro_batches.size()) * static_cast<uint64_t>(sequence_parallel) *
         static_cast<uint64_t>(interleaves.size()) * PerBlock(dp);
}

ShapeAxes AxesFor(const models::ModelSpec& m, const PlanShape& s, const PlanSpaceOptions& o) {
  ShapeAxes a;
  const FixedKnobs& f = o.fixed;
  for (int64_t b : Divisors(s.global_batch / s.dp))
    if ((o.max_micro_batch <= 0 || b <= o.max_micro_batch) && (f.micro_batch <= 0 || b == f.micro_batch))
      a.micro_batches.push_back(b);
  // A fixed interleave is taken as given (a measured run's stages need not
  // split the layers evenly); the estimator judges it.
  // A schedule whose chunks are fixed (o.schedule_takes_interleave false)
  // keeps interleave 1, the last branch.
  if (f.interleave > 0) {
    a.interleaves = {f.interleave};
  } else if (const int64_t rest = m.layers - o.first_stage_layers - o.last_stage_layers;
             o.schedule_takes_interleave && (o.first_stage_layers > 0 || o.last_stage_layers > 0) && s.pp > 2 &&
             rest > 0 && rest % (s.pp - 2) == 0) {
    // A laid-out pipeline (first and last device set, the middle devices
    // sharing the rest evenly): each middle device's layers split into the
    // chunks, and pp x interleave stays within the layers (the estimator's
    // rule, parallelism::PipelineSplitUnits).
    for (int64_t v : Divisors(rest / (s.pp - 2)))
      if (s.pp * v <= m.layers) a.interleaves.push_back(v);
  } else if (const int64_t units = SplitUnits(m, s); o.schedule_takes_interleave && s.pp > 1 && units % s.pp == 0) {
    a.interleaves = Divisors(units / s.pp);
  } else {
    a.interleaves = {1};
  }
  // A stated interleaved schedule keeps at least interleave_min chunks.
  if (f.interleave <= 0 && f.interleave_min > 1)
    std::erase_if(a.interleaves, [&](int64_t v) { return v < f.interleave_min; });
  // A flag held fixed is one value; a free one both, where it can matter.
  auto axis = [](int fixed, bool matters, int& count, int& from) {
    if (fixed >= 0) {
      count = 1;
      from = fixed;
    } else {
      count = matters ? 2 : 1;
      from = 0;
    }
  };
  axis(f.sequence_parallel, s.tp > 1, a.sequence_parallel, a.sequence_parallel_from);
  axis(f.tp_comm_overlap, s.tp > 1, a.tp_overlap, a.tp_overlap_from);
  axis(f.offload, o.offload, a.offload, a.offload_from);
  if (f.zero >= 0) {
    a.zero = 1;
    a.zero_from = f.zero;
  } else {
    a.zero = s.dp > 1 ? std::clamp(f.zero_max, 0, 3) + 1 : 1;
  }
  if (f.recompute >= 0) {
    a.recomputes = 1;
    a.recompute_from = f.recompute;
  }
  a.dp_overlap_fixed = f.dp_overlap;
  if (o.group_order.empty()) {
    a.orders = OrdersFor(s, o.all_group_orders);
  } else {
    a.orders.count = 1;
    a.orders.text[0].fill(0);
    std::memcpy(a.orders.text[0].data(), o.group_order.data(),
                std::min<size_t>(o.group_order.size(), a.orders.text[0].size() - 1));
  }
  return a;
}

uint64_t CountCandidates(const models::ModelSpec& m, const std::vector<PlanShape>& shapes,
                         const PlanSpaceOptions& o) {
  uint64_t n = 0;
  for (const PlanShape& s : shapes) n += AxesFor(m, s, o).Candidates(s.dp);
  return n;
}

void ApplyKnobs(const PlanKnobs& k, parallelism::TrainingPlan& p) {
  p.tp = k.tp;
  p.pp = k.pp;
  p.cp = k.cp;
  p.ep = k.ep;
  p.etp = k.etp;
  p.dp = k.dp;
  p.micro_batch = k.micro_batch;
  p.interleave = k.interleave;
  // 1F1B and interleaved 1F1B are one schedule at v = 1 and v > 1; the
  // others (GPipe, ZB-H1, the V-shapes) are kept as asked.
  if (parallelism::TakesInterleave(p.schedule))
    p.schedule = k.interleave > 1 ? parallelism::Schedule::kInterleaved : parallelism::Schedule::kOneFOneB;
  p.recompute = k.recompute;
  p.sequence_parallel = k.sequence_parallel;
  p.tp_comm_overlap = k.tp_comm_overlap;
  p.dp_overlap = k.dp_overlap;
  p.offload_optimizer = k.offload;
  p.zero = k.zero;
  p.group_order.assign(k.group_order.data());
}

std::string DescribeKnobs(const PlanKnobs& k) {
  std::string s = "tp=" + std::to_string(k.tp) + " pp=" + std::to_string(k.pp) +
                  " cp=" + std::to_string(k.cp) + " ep=" + std::to_string(k.ep) +
                  (k.etp > 0 && k.etp != k.tp ? " etp=" + std::to_string(k.etp) : std::string()) +
                  " dp=" + std::to_string(k.dp) + " micro_batch=" + std::to_string(k.micro_batch) +
                  " interleave=" + std::to_string(k.interleave) +
                  " recompute=" + parallelism::RecomputeName(k.recompute) +
                  " sequence_parallel=" + (k.sequence_parallel ? "true" : "false") +
                  " zero=" + std::to_string(k.zero) +
                  " dp_overlap=" + (k.dp_overlap ? "true" : "false") +
                  " tp_comm_overlap=" + (k.tp_comm_overlap ? "true" : "false") +
                  " offload_optimizer=" + (k.offload ? "true" : "false") +
                  " group_order=" + k.group_order.data();
  return s;
}

}  // namespace orrery::engine
