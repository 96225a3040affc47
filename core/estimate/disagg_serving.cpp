#include "core/estimate/disagg_serving.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <numeric>

#include "models/kv_cache.h"

namespace orrery::engine {

using parallelism::InferenceDeployment;

double KvTransferBytes(const models::ModelSpec& m, hardware::DataType kv, int64_t tokens) {
  return models::KvBytesPerToken(m, hardware::BytesPer(kv)) * models::KvHeldTokens(m, static_cast<double>(tokens));
}

KvLink ChooseKvLink(const hardware::SystemSpec& system, int64_t devices, int64_t forced) {
  KvLink link;
  const auto& tiers = system.network;
  if (tiers.empty()) return link;
  size_t pick = tiers.size() - 1;
  if (forced >= 0) {
    pick = std::min(tiers.size() - 1, static_cast<size_t>(forced));
  } else {
    for (size_t i = 0; i < tiers.size(); ++i)
      if (tiers[i].domain == 0 || tiers[i].domain >= devices) {
        pick = i;
        break;
      }
  }
  link.tier = static_cast<int>(pick);
  link.name = tiers[pick].name;
  link.bandwidth = tiers[pick].bandwidth;
  link.latency = tiers[pick].latency;
  link.efficiency = tiers[pick].efficiency;
  return link;
}

double KvTransferSeconds(double bytes, const KvLink& link, int64_t streams) {
  if (bytes <= 0 || link.tier < 0 || link.bandwidth <= 0) return 0;
  const double per_stream = bytes / static_cast<double>(std::max<int64_t>(1, streams));
  return link.latency + per_stream / (link.bandwidth * link.efficiency.At(per_stream));
}

PoolShape PrefillPool(const InferenceDeployment& d) {
  return {d.prefill_tp > 0 ? d.prefill_tp : d.tp, d.prefill_pp > 0 ? d.prefill_pp : d.pp,
          d.prefill_replicas};
}

PoolShape DecodePool(const InferenceDeployment& d) {
  return {d.decode_tp > 0 ? d.decode_tp : d.tp, d.decode_pp > 0 ? d.decode_pp : d.pp,
          d.decode_replicas};
}

namespace {

// A request whose prompt's KV has reached a decode replica.
struct DecodeArrival {
  double t = 0;
  size_t id = 0;  // index into the outcomes
  int64_t input = 0, output = 0;
};

// One decode replica: continuous batching of decode steps. Fills
// outcomes[id].finish_s; returns false with `reason` when a request cannot
// fit its KV cache. Adds the time from arrival to admission to `waits` and
// the decode steps to `iterations`; raises `peak` to the most running.
bool SimulateDecodeReplica(const InferenceEstimator& est, const InferenceDeployment& dd,
                           std::vector<DecodeArrival> arrivals, std::vector<RequestOutcome>& out,
                           PassCache& cache, double& waits, int64_t& iterations,
                           int64_t& peak, std::string& reason) {
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [](const DecodeArrival& a, const DecodeArrival& b) { return a.t < b.t; });
  // Decode passes are max_batch tokens at most: the activations to leave room for.
  const double capacity = est.KvCapacityTokens(dd, static_cast<double>(dd.max_batch));
  struct Running {
    size_t arrival;     // index into arrivals
    int64_t cached;     // tokens in the cache
    int64_t generated;  // output tokens so far (the first came from prefill)
  };
  std::vector<Running> running;
  running.reserve(static_cast<size_t>(std::max<int64_t>(1, dd.max_batch)));
  std::deque<size_t> waiting;
  double free_tokens = capacity, t = 0;
  size_t next = 0, done = 0;
  const size_t n = arrivals.size();
  // A request reserves its whole context, of every layer's cache; fewer
  // with local layers (models::KvHeldTokens).
  const models::ModelSpec& model = est.model();
  auto held = [&](const DecodeArrival& a) {
    return models::KvHeldTokens(model, static_cast<double>(a.input + a.output));
  };
  for (const DecodeArrival& a : arrivals)
    if (held(a) > capacity) {
      reason = "a request of " + std::to_string(a.input + a.output) +
               " tokens does not fit the KV cache of one decode replica (" +
               std::to_string(static_cast<int64_t>(capacity)) + " tokens)";
      return false;
    }
  while (done < n) {
    while (next < n && arrivals[next].t <= t) waiting.push_back(next++);
    if (running.empty() && waiting.empty()) {
      t = arrivals[next].t;
      continue;
    }
    while (!waiting.empty() && static_cast<int64_t>(running.size()) < dd.max_batch) {
      const DecodeArrival& a = arrivals[waiting.front()];
      const double need = held(a);
      if (need > free_tokens) break;
      free_tokens -= need;
      waits += t - a.t;
      running.push_back({waiting.front(), a.input, 1});
      waiting.pop_front();
    }
    peak = std::max<int64_t>(peak, static_cast<int64_t>(running.size()));
    IterationShape shape;
    for (const Running& r : running)
      shape += IterationShape::Decode(1, static_cast<double>(r.cached + 1), &model);
    t += est.Pass(dd, shape, cache).total;
    ++iterations;
    for (Running& r : running) {
      ++r.cached;
      ++r.generated;
    }
    auto finished = [&](const Running& r) {
      const DecodeArrival& a = arrivals[r.arrival];
      if (r.generated < a.output) return false;
      out[a.id].finish_s = t;
      free_tokens += held(a);
      ++done;
      return true;
    };
    running.erase(std::remove_if(running.begin(), running.end(), finished), running.end());
  }
  return true;
}

InferenceDeployment WithShape(const InferenceDeployment& d, const PoolShape& p) {
  InferenceDeployment out = d;
  out.tp = p.tp;
  out.pp = p.pp;
  out.ep = std::min(d.ep, p.tp);
  out.disaggregate = false;
  return out;
}

}  // namespace

DisaggResult SimulateDisaggregated(const InferenceEstimator& est, const InferenceDeployment& d,
                                   const std::vector<Request>& requests) {
  DisaggResult res;
  res.prefill = PrefillPool(d);
  res.decode = DecodePool(d);
  res.devices = res.prefill.devices() + res.decode.devices();
  const InferenceDeployment dp = WithShape(d, res.prefill);
  const InferenceDeployment dd = WithShape(d, res.decode);
  for (const auto* pool : {&dp, &dd})
    if (const auto shape = CheckShape(est.model(), est.system(), *pool);
        shape != InferenceInfeasible::kNone) {
      res.feasible = false;
      res.reason = std::string(pool == &dp ? "prefill" : "decode") + " pool (tp " +
                   std::to_string(pool->tp) + ", pp " + std::to_string(pool->pp) +
                   "): cannot split the model or lacks devices or a network tier";
      return res;
    }
  if (res.devices > hardware::DeviceCount(est.system())) {
    res.feasible = false;
    res.reason = "the pools need " + std::to_string(res.devices) + " devices (prefill " +
                 std::to_string(res.prefill.devices()) + " + decode " +
                 std::to_string(res.decode.devices()) + "); the system has " +
                 std::to_string(hardware::DeviceCount(est.system()));
    return res;
  }
  if (requests.empty()) {
    res.feasible = false;
    res.reason = "no requests";
    return res;
  }
  res.link = ChooseKvLink(est.system(), res.devices, d.kv_tier);

  // Prefill pool: every request with one output token, round robin.
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].arrival_s < requests[b].arrival_s;
  });
  const size_t np = static_cast<size_t>(res.prefill.replicas);
  std::vector<RequestOutcome> out(requests.size());
  std::vector<DecodeArrival> kv_ready;
  kv_ready.reserve(requests.size());
  const int64_t streams =
      std::min(res.prefill.tp * res.prefill.pp, res.decode.tp * res.decode.pp);
  double transfer_sum = 0, transfer_wait_sum = 0, bytes_sum = 0;
  for (size_t k = 0; k < np; ++k) {
    std::vector<Request> mine;
    std::vector<size_t> ids;
    for (size_t i = k; i < order.size(); i += np) {
      Request q = requests[order[i]];
      q.output = 1;
      mine.push_back(q);
      ids.push_back(order[i]);
    }
    if (mine.empty()) continue;
    // SimulateServing keeps its requests' order (arrival, stable).
    const ServingResult pre = SimulateServing(est, dp, mine);
    if (!pre.feasible) {
      res.feasible = false;
      res.reason = "prefill pool: " + pre.reason;
      return res;
    }
    res.serving.iterations += pre.iterations;
    double link_free = 0;  // this replica's link to the decode pool, one transfer at a time
    for (size_t j = 0; j < ids.size(); ++j) {
      const Request& q = requests[ids[j]];
      RequestOutcome& o = out[ids[j]];
      o.arrival_s = q.arrival_s;
      o.input = q.input;
      o.output = q.output;
      o.first_token_s = pre.requests[j].first_token_s;
      o.finish_s = o.first_token_s;
      if (q.output <= 1) continue;  // done with the first token: no KV to send
      const double bytes = KvTransferBytes(est.model(), d.kv_cache, q.input);
      const double start = std::max(o.first_token_s, link_free);
      const double sec = KvTransferSeconds(bytes, res.link, streams);
      link_free = start + sec;
      bytes_sum += bytes;
      transfer_sum += sec;
      transfer_wait_sum += start - o.first_token_s;
      kv_ready.push_back({link_free, ids[j], q.input, q.output});
    }
  }

  // Decode pool: round robin in the order the KV arrives.
  std::stable_sort(kv_ready.begin(), kv_ready.end(),
                   [](const DecodeArrival& a, const DecodeArrival& b) { return a.t < b.t; });
  const size_t nd = static_cast<size_t>(res.decode.replicas);
  const auto cache = std::make_unique<PassCache>();
  double decode_waits = 0;
  for (size_t k = 0; k < nd; ++k) {
    std::vector<DecodeArrival> mine;
    for (size_t i = k; i < kv_ready.size(); i += nd) mine.push_back(kv_ready[i]);
    if (mine.empty()) continue;
    if (!SimulateDecodeReplica(est, dd, std::move(mine), out, *cache, decode_waits,
                               res.serving.iterations, res.serving.peak_running, res.reason)) {
      res.feasible = false;
      res.reason = "decode pool: " + res.reason;
      return res;
    }
  }
  const double sent = static_cast<double>(std::max<size_t>(1, kv_ready.size()));
  res.kv_bytes_mean = bytes_sum / sent;
  res.transfer_s_mean = transfer_sum / sent;
  res.transfer_wait_s_mean = transfer_wait_sum / sent;
  res.decode_wait_s_mean = decode_waits / sent;
  res.serving.requests = std::move(out);
  res.serving.kv_capacity_tokens = est.KvCapacityTokens(dd, static_cast<double>(dd.max_batch));
  SummarizeOutcomes(d, res.serving);
  return res;
}

namespace {

// Tensor-parallel degrees worth trying: powers of two up to a node that
// split the model (CheckShape) and leave room for some KV cache.
std::vector<int64_t> TpChoices(const InferenceEstimator& est, const InferenceDeployment& d,
                               int64_t gpus) {
  std::vector<int64_t> out;
  const int64_t node = std::max<int64_t>(1, est.system().devices_per_node);
  for (int64_t tp = 1; tp <= std::min(node, gpus); tp *= 2) {
    InferenceDeployment t = d;
    t.tp = tp;
    t.ep = std::min(d.ep, tp);
    if (tp * t.pp > gpus) break;
    if (CheckShape(est.model(), est.system(), t) != InferenceInfeasible::kNone) continue;
    if (est.KvCapacityTokens(t, static_cast<double>(t.max_batch_tokens)) <
        models::KvHeldTokens(est.model(), static_cast<double>(d.input + d.output)))
      continue;
    out.push_back(tp);
  }
  return out;
}

void Fill(SplitCandidate& c, const ServingResult& s, bool feasible, const std::string& reason) {
  c.feasible = feasible;
  c.reason = reason;
  if (!feasible) return;
  c.slo_attainment = s.slo_attainment;
  c.goodput_requests_per_s = s.goodput_requests_per_s;
  c.ttft_p90_s = s.ttft_s.p90;
  c.tpot_p90_s = s.tpot_s.p90;
}

}  // namespace

SplitSearch BestSplit(const InferenceEstimator& est, const InferenceDeployment& d, int64_t gpus) {
  SplitSearch out;
  out.gpus = gpus;
  const std::vector<Request> requests = PoissonRequests(d, d.rate);
  const std::vector<int64_t> tps = TpChoices(est, d, gpus);
  if (tps.empty()) {
    out.reason = "no tensor-parallel degree up to " + std::to_string(gpus) +
                 " devices splits the model and leaves room for one request's KV cache";
    return out;
  }
  for (int64_t tp : tps)  // colocated: 1 .. as many replicas as fit
    for (int64_t n = 1; n * tp * d.pp <= gpus; ++n) {
      SplitCandidate c;
      c.prefill = {tp, d.pp, n};
      c.devices = c.prefill.devices();
      const InferenceDeployment t = WithShape(d, c.prefill);
      const ServingResult s = SimulateReplicas(est, t, requests, n);
      Fill(c, s, s.feasible, s.reason);
      out.candidates.push_back(c);
    }
  for (int64_t tpp : tps)
    for (int64_t tpd : tps) {
      const int64_t unit_p = tpp * d.pp, unit_d = tpd * d.pp;
      for (int64_t np = 1; np * unit_p + unit_d <= gpus; ++np)
        for (int64_t nd = 1; np * unit_p + nd * unit_d <= gpus; ++nd) {
        SplitCandidate c;
        c.disaggregated = true;
        c.prefill = {tpp, d.pp, np};
        c.decode = {tpd, d.pp, nd};
        c.devices = c.prefill.devices() + c.decode.devices();
        InferenceDeployment t = d;
        t.prefill_tp = tpp;
        t.decode_tp = tpd;
        t.prefill_pp = t.decode_pp = d.pp;
        t.prefill_replicas = np;
        t.decode_replicas = nd;
        const DisaggResult r = SimulateDisaggregated(est, t, requests);
        Fill(c, r.serving, r.feasible, r.reason);
        out.candidates.push_back(c);
        }
    }
  const double target = d.slo_attainment;
  std::stable_sort(out.candidates.begin(), out.candidates.end(),
                   [target](const SplitCandidate& a, const SplitCandidate& b) {
                     if (a.feasible != b.feasible) return a.feasible;
                     const bool ma = a.slo_attainment >= target, mb = b.slo_attainment >= target;
                     if (ma != mb) return ma;
                     if (ma && a.devices != b.devices) return a.devices < b.devices;
                     if (a.slo_attainment != b.slo_attainment)
                       return a.slo_attainment > b.slo_attainment;
                     if (a.devices != b.devices) return a.devices < b.devices;
                     if (a.disaggregated != b.disaggregated) return !a.disaggregated;
                     return a.ttft_p90_s < b.ttft_p90_s;
                   });
  for (size_t i = 0; i < out.candidates.size(); ++i) {
    const SplitCandidate& c = out.candidates[i];
    if (!c.feasible) continue;
    int& slot = c.disaggregated ? out.best_disaggregated : out.best_colocated;
    if (slot < 0) slot = static_cast<int>(i);
  }
  out.found = out.best_disaggregated >= 0 || out.best_colocated >= 0;
  if (!out.found) {
    out.reason = out.candidates.empty() ? "no candidate" : out.candidates.front().reason;
    return out;
  }
  out.prefers_disaggregation =
      out.best_disaggregated >= 0 &&
      (out.best_colocated < 0 || out.best_disaggregated < out.best_colocated);
  return out;
}

}  // namespace orrery::engine
