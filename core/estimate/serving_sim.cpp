#include "core/estimate/serving_sim.h"

#include <algorithm>
#include <memory>
#include <cmath>
#include <cstring>
#include <deque>
#include <numeric>

#include "core/base/csv.h"
#include "models/kv_cache.h"

namespace orrery::engine {

using parallelism::InferenceDeployment;
using parallelism::LengthDistribution;
using parallelism::Scheduler;

namespace {

// SplitMix64 (Steele, Lea and Flood 2014): the same stream on every platform,
// unlike the standard library's distributions.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

int64_t DrawLength(Rng& rng, LengthDistribution dist, int64_t mean) {
  const double m = static_cast<double>(mean);
  switch (dist) {
    case LengthDistribution::kFixed: return mean;
    case LengthDistribution::kUniform:  // integers 1 .. 2m - 1, mean m
      return 1 + static_cast<int64_t>(rng.Uniform() * (2 * m - 1));
    case LengthDistribution::kExponential:
      return std::max<int64_t>(1, std::llround(-m * std::log1p(-rng.Uniform())));
  }
  return mean;
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

enum class Phase { kPending, kWaiting, kRunning, kDone };

struct Seq {
  Phase phase = Phase::kPending;
  int64_t prompt = 0;     // tokens to prefill (input, plus generated ones after a preemption)
  int64_t prefilled = 0;  // prompt tokens processed
  int64_t cached = 0;     // tokens whose K/V are in the cache
  int64_t generated = 0;  // output tokens produced
  int64_t blocks = 0;     // KV blocks (or reserved tokens) held
  int64_t order = 0;      // admission order, for preemption (newest first)
  double credit = 0;      // speculative decoding: expected tokens not yet emitted
  double first = -1;
  double finish = 0;
  int preemptions = 0;
};

// The total time of a decode-only pass by its exact shape (sequences,
// summed context), within one simulation (one estimator, one deployment):
// InferenceEstimator::Pass is a pure function of the shape, so a remembered
// total is the same double the estimator would return. A replica decoding B
// sequences steps its summed context by B each iteration, so the slot is
// the context plus an offset per B: consecutive iterations touch
// neighbouring slots (the memory prefetcher follows them), where a hash of
// both would land every iteration on a cold cache line. Direct-mapped: a
// colliding shape replaces the entry. Passes with prompt tokens are not
// kept (one or a few per request, against a decode step per output token).
// Sized once per simulation from its request count; no allocation per pass.
class DecodeMemo {
 public:
  explicit DecodeMemo(size_t requests) {
    size_t n = 256;
    while (n < 4 * requests && n < kMaxEntries) n *= 2;
    entries_.resize(n);
    mask_ = n - 1;
  }
  // Pass time of `it`: from the table when it is decode-only and was seen,
  // else `compute(it)` (kept for next time when decode-only).
  template <class F>
  double Total(const IterationShape& it, F&& compute) {
    // A model with local layers attends to a sum of its own (not a function
    // of the two counts the key holds): not kept.
    if (it.prefill_seqs != 0 || it.prefill_tokens != 0 || it.prefill_pairs != 0 ||
        it.prefill_context != 0 || it.decode_context_local != it.decode_context ||
        !(it.decode_seqs >= 1) || !(it.decode_context >= 0) ||
        it.decode_seqs >= 0x1p23 || it.decode_context >= 0x1p40)
      return compute(it);
    const uint64_t b = static_cast<uint64_t>(it.decode_seqs);
    const uint64_t c = static_cast<uint64_t>(it.decode_context);
    // Whole counts only (they are sums of token counts): the key is exact.
    if (static_cast<double>(b) != it.decode_seqs || static_cast<double>(c) != it.decode_context)
      return compute(it);
    const uint64_t key = (b << 40) | c;
    const uint64_t spread = (b * 0x9E3779B97F4A7C15ULL) >> 40;
    // The next decode step of the same sequences is the slot b further on.
    __builtin_prefetch(&entries_[(c + b + spread) & mask_]);
    Entry& e = entries_[(c + spread) & mask_];
    if (e.key == key) return e.total;
    e.total = compute(it);
    e.key = key;
    return e.total;
  }

 private:
  static constexpr size_t kMaxEntries = size_t{1} << 20;
  // 16 bytes: four entries a cache line.
  struct Entry {
    uint64_t key = 0;  // sequences << 40 | summed context; 0: empty (a pass has a sequence)
    double total = 0;
  };
  std::vector<Entry> entries_;
  size_t mask_ = 0;
};

}  // namespace

namespace {

// Sorts `v` ascending, as std::sort does, by a least-significant-digit radix
// sort of the doubles' bit patterns (Knuth, TAOCP vol. 3, Sec. 5.2.5): a
// double's bits with the sign bit flipped (non-negative) or all bits flipped
// (negative) compare as unsigned integers as the doubles do, so the sorted
// sequence is the same values in the same order (equal values are equal
// bits, but for -0 and +0, which no latency is). Six passes of 11 bits; a
// pass whose digit all keys share is skipped. Falls back to std::sort for
// short inputs and for NaN.
void SortDoubles(std::vector<double>& v) {
  if (v.size() < 4096) {
    std::sort(v.begin(), v.end());
    return;
  }
  std::vector<uint64_t> keys(v.size()), tmp(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) {
      std::sort(v.begin(), v.end());
      return;
    }
    uint64_t b;
    std::memcpy(&b, &v[i], sizeof b);
    keys[i] = (b >> 63) != 0 ? ~b : b | (uint64_t{1} << 63);
  }
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  for (int shift = 0; shift < 64; shift += kBits) {
    size_t count[kBuckets] = {};
    for (uint64_t k : keys) ++count[(k >> shift) & (kBuckets - 1)];
    if (count[(keys[0] >> shift) & (kBuckets - 1)] == keys.size()) continue;
    size_t at = 0;
    for (size_t& c : count) {
      const size_t here = c;
      c = at;
      at += here;
    }
    for (uint64_t k : keys) tmp[count[(k >> shift) & (kBuckets - 1)]++] = k;
    keys.swap(tmp);
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t k = keys[i];
    const uint64_t b = (k >> 63) != 0 ? k & ~(uint64_t{1} << 63) : ~k;
    std::memcpy(&v[i], &b, sizeof b);
  }
}

}  // namespace

Percentiles ComputePercentiles(std::vector<double> values) {
  Percentiles p;
  if (values.empty()) return p;
  SortDoubles(values);
  double sum = 0;
  for (double v : values) sum += v;
  p.mean = sum / static_cast<double>(values.size());
  p.p50 = Quantile(values, 0.50);
  p.p90 = Quantile(values, 0.90);
  p.p99 = Quantile(values, 0.99);
  p.max = values.back();
  return p;
}

std::vector<Request> PoissonRequests(const InferenceDeployment& d, double rate) {
  Rng rng{static_cast<uint64_t>(d.seed) * 0x2545F4914F6CDD1DULL + 1};
  std::vector<Request> out;
  out.reserve(static_cast<size_t>(d.requests));
  double t = 0;
  for (int64_t i = 0; i < d.requests; ++i) {
    // Exponential gaps of mean 1/rate: a Poisson process.
    if (i > 0) t += -std::log1p(-rng.Uniform()) / rate;
    Request r;
    r.arrival_s = t;
    r.input = DrawLength(rng, d.lengths, d.input);
    r.output = DrawLength(rng, d.lengths, d.output);
    out.push_back(r);
  }
  return out;
}

std::optional<std::vector<Request>> LoadTrace(const std::string& file, base::Diagnostics& diags) {
  auto table = base::ReadCsvFile(file);
  if (!table) {
    diags.Add({file, 0, 0}, "inference.trace", file, table.error().message);
    return std::nullopt;
  }
  const auto& t = *table;
  const int ia = t.ColumnIndex("arrival_s"), ii = t.ColumnIndex("input"),
            io = t.ColumnIndex("output");
  const std::vector<std::string> need = {"arrival_s", "input", "output"};
  bool ok = true;
  for (const auto& c : need)
    if (t.ColumnIndex(c) < 0) {
      diags.Add({file, t.header_line, 0}, "inference.trace", c,
                "required trace column is missing (arrival_s, input, output)",
                base::DidYouMean(c, t.header));
      ok = false;
    }
  if (!ok) return std::nullopt;
  std::vector<Request> out;
  for (const auto& row : t.rows) {
    double a = 0, in = 0, o = 0;
    const bool good = base::ParseDouble(row.cells[static_cast<size_t>(ia)], &a) &&
                      base::ParseDouble(row.cells[static_cast<size_t>(ii)], &in) &&
                      base::ParseDouble(row.cells[static_cast<size_t>(io)], &o) &&
                      a >= 0 && in >= 1 && o >= 1 && in == std::floor(in) && o == std::floor(o);
    if (!good) {
      diags.Add({file, row.line, 0}, "inference.trace", "",
                "expected arrival_s >= 0 (seconds) and whole input, output >= 1");
      continue;
    }
    out.push_back({a, static_cast<int64_t>(in), static_cast<int64_t>(o)});
  }
  if (out.empty() && diags.ok())
    diags.Add({file, t.header_line, 0}, "inference.trace", "", "the trace has no requests");
  if (!diags.ok()) return std::nullopt;
  return out;
}

ServingResult SimulateServing(const InferenceEstimator& est, const InferenceDeployment& d,
                              std::vector<Request> requests) {
  ServingResult res;
  std::stable_sort(requests.begin(), requests.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  const size_t n = requests.size();
  if (n == 0) {
    res.feasible = false;
    res.reason = "no requests";
    return res;
  }
  const bool is_static = d.scheduler == Scheduler::kStatic;
  const bool paged = d.paged_kv && !is_static;
  // Speculative decoding: a decode step verifies k + 1 tokens per sequence
  // and yields (1 - a^(k+1)) / (1 - a) of them on average (Leviathan et al.
  // 2023), after k draft steps.
  const int64_t k = d.speculate;
  const double tokens_per_step = SpeculativeTokensPerStep(k, d.acceptance);
  const int64_t block = paged ? d.kv_block : 1;
  res.kv_capacity_tokens = est.KvCapacityTokens(d, static_cast<double>(d.max_batch_tokens));
  const int64_t capacity = static_cast<int64_t>(res.kv_capacity_tokens) / block;  // blocks
  // A sequence's blocks hold its tokens of every layer's cache; with local
  // layers (a window or a chunk) fewer: models::KvHeldTokens, in blocks of
  // every layer's width (vLLM's hybrid KV cache manager gives each layer
  // group pages of one size from one pool).
  const models::ModelSpec& model = est.model();
  const bool local = models::LocalLayers(model) > 0;
  auto held = [&](int64_t tokens) {
    return local ? static_cast<int64_t>(std::ceil(models::KvHeldTokens(model, static_cast<double>(tokens))))
                 : tokens;
  };
  auto blocks_for = [&](int64_t tokens) { return (held(tokens) + block - 1) / block; };
  for (const Request& r : requests) {
    if (blocks_for(r.input + r.output) > capacity) {
      res.feasible = false;
      res.reason = "a request of " + std::to_string(r.input + r.output) +
                   " tokens does not fit the KV cache of one replica (" +
                   std::to_string(static_cast<int64_t>(res.kv_capacity_tokens)) + " tokens)";
      return res;
    }
  }

  std::vector<Seq> seq(n);
  for (size_t i = 0; i < n; ++i) seq[i].prompt = requests[i].input;
  std::deque<size_t> waiting;
  std::vector<size_t> running;  // admission order
  int64_t free_blocks = capacity;
  int64_t admitted = 0;
  size_t next = 0, done = 0;
  double t = 0;

  auto release = [&](size_t i) {
    free_blocks += seq[i].blocks;
    seq[i].blocks = 0;
  };
  auto preempt = [&](size_t i) {
    release(i);
    Seq& s = seq[i];
    s.prompt = requests[i].input + s.generated;  // recomputed as a prompt
    s.prefilled = 0;
    s.cached = 0;
    s.phase = Phase::kWaiting;
    ++s.preemptions;
    ++res.preemptions;
    running.erase(std::find(running.begin(), running.end(), i));
    waiting.push_front(i);
  };
  // Makes request i hold blocks for `tokens` cached tokens, preempting the
  // newest running request while blocks are short. False when i itself was
  // the newest and got preempted.
  auto reserve = [&](size_t i, int64_t tokens) {
    // Most calls are inside the blocks held (a block spans kv_block decode
    // steps): ceil(tokens / block) <= blocks, said without a division.
    if (held(tokens) <= seq[i].blocks * block) return true;
    const int64_t need = blocks_for(tokens) - seq[i].blocks;
    while (need > free_blocks) {
      size_t victim = running.back();
      for (size_t r : running)
        if (seq[r].order > seq[victim].order) victim = r;
      preempt(victim);
      if (victim == i) return false;
    }
    if (need > 0) {
      free_blocks -= need;
      seq[i].blocks += need;
    }
    return true;
  };
  auto admit = [&](size_t i) {
    waiting.pop_front();
    seq[i].phase = Phase::kRunning;
    seq[i].order = admitted++;
    running.push_back(i);
  };

  struct Chunk {
    size_t id;
    int64_t tokens;
  };
  std::vector<size_t> decoders;
  std::vector<Chunk> chunks;
  std::vector<size_t> order;  // a copy of `running` to walk while it changes
  decoders.reserve(static_cast<size_t>(std::max<int64_t>(1, d.max_batch)));
  chunks.reserve(static_cast<size_t>(std::max<int64_t>(1, d.max_batch)));
  order.reserve(static_cast<size_t>(std::max<int64_t>(1, d.max_batch)));
  // Passes of the same token and sequence counts share their GEMM, norm,
  // head and collective times (InferenceEstimator::Pass with a cache).
  const auto cache = std::make_unique<PassCache>();
  DecodeMemo pass_memo(n), draft_memo(k > 0 ? n : 0);
  constexpr int64_t kMaxIterations = 50'000'000;

  while (done < n) {
    while (next < n && requests[next].arrival_s <= t) {
      seq[next].phase = Phase::kWaiting;
      waiting.push_back(next++);
    }
    if (running.empty() && waiting.empty()) {
      t = requests[next].arrival_s;
      continue;
    }
    decoders.clear();
    chunks.clear();
    IterationShape shape;
    if (is_static) {
      if (running.empty()) {
        // A new static batch: FIFO, up to max_batch, KV reserved for input + output.
        while (!waiting.empty() && static_cast<int64_t>(running.size()) < d.max_batch) {
          const size_t i = waiting.front();
          const int64_t need = blocks_for(requests[i].input + requests[i].output);
          if (need > free_blocks) break;
          free_blocks -= need;
          seq[i].blocks = need;
          admit(i);
          chunks.push_back({i, seq[i].prompt});
        }
      } else {
        // Everyone in the batch steps until the longest is done (padding).
        for (size_t i : running) decoders.push_back(i);
      }
    } else {
      // Requests already running: decodes (and, chunked, unfinished prompts).
      int64_t budget = d.max_batch_tokens;
      bool prefill_only = false;
      if (d.scheduler == Scheduler::kContinuous) {
        // New prompts first, in a prefill-only iteration (vLLM default).
        int64_t tokens = 0;
        while (!waiting.empty() && static_cast<int64_t>(running.size()) < d.max_batch) {
          const size_t i = waiting.front();
          const int64_t p = seq[i].prompt;
          if (!chunks.empty() && tokens + p > d.max_batch_tokens) break;
          const int64_t need =
              blocks_for(paged ? p : requests[i].input + requests[i].output) - seq[i].blocks;
          if (need > free_blocks) break;
          free_blocks -= need;
          seq[i].blocks += need;
          admit(i);
          chunks.push_back({i, p});
          tokens += p;
        }
        prefill_only = !chunks.empty();
      }
      if (!prefill_only) {
        // A decode step takes at most ceil((1 + k) / block) + 1 new blocks
        // a request: with that many free for every running request, no
        // reserve() preempts, `running` stays as it is and is walked in place.
        const int64_t most = static_cast<int64_t>(running.size()) * ((1 + k + block - 1) / block + 1);
        const bool may_preempt = paged && most > free_blocks;
        if (may_preempt) order.assign(running.begin(), running.end());
        for (size_t i : may_preempt ? order : running) {
          if (seq[i].phase != Phase::kRunning || seq[i].prefilled < seq[i].prompt) continue;
          if (paged && !reserve(i, seq[i].cached + 1 + k)) continue;
          decoders.push_back(i);
        }
        // reserve() may have preempted requests listed earlier.
        if (may_preempt)
          decoders.erase(std::remove_if(decoders.begin(), decoders.end(),
                                        [&](size_t i) { return seq[i].phase != Phase::kRunning; }),
                         decoders.end());
        budget -= static_cast<int64_t>(decoders.size());
      }
      if (d.scheduler == Scheduler::kChunked) {
        // Unfinished prompts of running requests, oldest first.
        order.assign(running.begin(), running.end());
        for (size_t i : order) {
          if (budget <= 0) break;
          if (seq[i].phase != Phase::kRunning || seq[i].prefilled >= seq[i].prompt) continue;
          const int64_t c = std::min(budget, seq[i].prompt - seq[i].prefilled);
          if (paged && !reserve(i, seq[i].cached + c)) continue;
          chunks.push_back({i, c});
          budget -= c;
        }
        chunks.erase(std::remove_if(chunks.begin(), chunks.end(),
                                    [&](const Chunk& c) { return seq[c.id].phase != Phase::kRunning; }),
                     chunks.end());
        decoders.erase(std::remove_if(decoders.begin(), decoders.end(),
                                      [&](size_t i) { return seq[i].phase != Phase::kRunning; }),
                       decoders.end());
        // Then new requests, while the budget, max_batch and free blocks allow.
        while (budget > 0 && !waiting.empty() &&
               static_cast<int64_t>(running.size()) < d.max_batch) {
          const size_t i = waiting.front();
          const int64_t c = std::min(budget, seq[i].prompt);
          const int64_t need =
              blocks_for(paged ? c : requests[i].input + requests[i].output) - seq[i].blocks;
          if (need > free_blocks) break;
          free_blocks -= need;
          seq[i].blocks += need;
          admit(i);
          chunks.push_back({i, c});
          budget -= c;
        }
      }
    }
    IterationShape drafts;
    if (k > 0) {
      for (size_t i : decoders) {
        const double context = static_cast<double>(seq[i].cached + 1);
        drafts += IterationShape::Decode(1, context);  // only speculation drafts
        shape += IterationShape::Prefill(1, static_cast<double>(k + 1), context - 1, &model);
      }
    } else {
      // shape += IterationShape::Decode(1, context) for each decoder, written
      // out: the same additions in the same order (the prefill fields it
      // would add are +0.0, which leaves them as they are).
      for (size_t i : decoders) {
        const double context = static_cast<double>(seq[i].cached + 1);
        shape.decode_seqs += 1.0;
        shape.decode_context += context;
        shape.decode_context_local += local ? models::LocalKeys(model, context) : context;
      }
    }
    for (const Chunk& c : chunks)
      shape += IterationShape::Prefill(1, static_cast<double>(c.tokens),
                                       static_cast<double>(seq[c.id].prefilled), &model);
    if (decoders.empty() && chunks.empty()) {
      // Nothing can run until a request arrives (memory is held by none).
      if (next < n && running.empty()) {
        t = std::max(t, requests[next].arrival_s);
        continue;
      }
      res.feasible = false;
      res.reason = "the scheduler cannot make progress (KV cache too small for the running set)";
      break;
    }
    res.peak_running = std::max<int64_t>(res.peak_running, static_cast<int64_t>(running.size()));
    t += pass_memo.Total(shape, [&](const IterationShape& it) { return est.Pass(d, it, *cache).total; });
    if (k > 0 && !decoders.empty())
      t += static_cast<double>(k) *
           (est.has_draft() ? draft_memo.Total(drafts,
                                               [&](const IterationShape& it) {
                                                 return est.DraftPass(d, it, *cache).total;
                                               })
                            : d.draft_cost * pass_memo.Total(drafts, [&](const IterationShape& it) {
                                return est.Pass(d, it, *cache).total;
                              }));
    if (++res.iterations > kMaxIterations) {
      res.feasible = false;
      res.reason = "more than 50 million iterations; lower the load or the requests";
      break;
    }

    auto finish_if_done = [&](size_t i) {
      Seq& s = seq[i];
      if (s.generated < requests[i].output) return;
      s.finish = t;
      if (!is_static) {
        s.phase = Phase::kDone;
        release(i);
        running.erase(std::find(running.begin(), running.end(), i));
      }
      ++done;
    };
    for (const Chunk& c : chunks) {
      Seq& s = seq[c.id];
      s.prefilled += c.tokens;
      s.cached += c.tokens;
      if (s.prefilled == s.prompt) {
        ++s.generated;  // the pass over the last prompt token yields a token
        if (s.first < 0) s.first = t;
        finish_if_done(c.id);
      }
    }
    for (size_t i : decoders) {
      Seq& s = seq[i];
      if (is_static && s.generated >= requests[i].output) continue;  // padding
      int64_t got = 1;
      if (k > 0) {
        s.credit += tokens_per_step;
        got = std::max<int64_t>(1, static_cast<int64_t>(s.credit));
        s.credit -= static_cast<double>(got);
      }
      got = std::min(got, requests[i].output - s.generated);
      s.cached += got;
      s.generated += got;
      finish_if_done(i);
    }
    if (is_static) {
      bool all = true;
      for (size_t i : running) all = all && seq[i].generated >= requests[i].output;
      if (all) {
        for (size_t i : running) {
          seq[i].phase = Phase::kDone;
          release(i);
        }
        running.clear();
      }
    }
  }

  // --- metrics ------------------------------------------------------------------
  res.requests.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    RequestOutcome o;
    o.arrival_s = requests[i].arrival_s;
    o.first_token_s = seq[i].first;
    o.finish_s = seq[i].finish;
    o.input = requests[i].input;
    o.output = requests[i].output;
    o.preemptions = seq[i].preemptions;
    o.done = seq[i].phase == Phase::kDone;
    res.requests.push_back(o);
  }
  SummarizeOutcomes(d, res);
  return res;
}

void SummarizeOutcomes(const InferenceDeployment& d, ServingResult& res) {
  std::vector<double> ttft, tpot, e2e;
  double first_arrival = 0, last = 0, tokens = 0;
  int64_t good = 0, completed = 0;
  for (size_t i = 0; i < res.requests.size(); ++i) {
    const RequestOutcome& o = res.requests[i];
    first_arrival = i == 0 ? o.arrival_s : std::min(first_arrival, o.arrival_s);
    if (!o.done) continue;
    ++completed;
    ttft.push_back(o.ttft());
    if (o.output > 1) tpot.push_back(o.tpot());
    e2e.push_back(o.finish_s - o.arrival_s);
    last = std::max(last, o.finish_s);
    tokens += static_cast<double>(o.output);
    if ((d.slo_ttft <= 0 || o.ttft() <= d.slo_ttft) && (d.slo_tpot <= 0 || o.tpot() <= d.slo_tpot))
      ++good;
  }
  res.ttft_s = ComputePercentiles(std::move(ttft));
  res.tpot_s = ComputePercentiles(std::move(tpot));
  res.e2e_s = ComputePercentiles(std::move(e2e));
  res.duration_s = last - first_arrival;
  if (res.duration_s > 0) {
    res.output_tokens_per_s = tokens / res.duration_s;
    res.requests_per_s = static_cast<double>(completed) / res.duration_s;
    res.goodput_requests_per_s = static_cast<double>(good) / res.duration_s;
  }
  res.slo_attainment =
      res.requests.empty() ? 0 : static_cast<double>(good) / static_cast<double>(res.requests.size());
}

ServingResult SimulateReplicas(const InferenceEstimator& est, const InferenceDeployment& d,
                               const std::vector<Request>& requests, int64_t replicas) {
  ServingResult res;
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].arrival_s < requests[b].arrival_s;
  });
  const size_t r = static_cast<size_t>(std::max<int64_t>(1, replicas));
  for (size_t k = 0; k < r; ++k) {
    std::vector<Request> mine;
    for (size_t i = k; i < order.size(); i += r) mine.push_back(requests[order[i]]);
    if (mine.empty()) continue;
    ServingResult one = SimulateServing(est, d, std::move(mine));
    if (!one.feasible) return one;
    res.preemptions += one.preemptions;
    res.iterations += one.iterations;
    res.peak_running = std::max(res.peak_running, one.peak_running);
    res.kv_capacity_tokens = one.kv_capacity_tokens;
    for (const RequestOutcome& o : one.requests) res.requests.push_back(o);
  }
  SummarizeOutcomes(d, res);
  return res;
}

int64_t ServingReplicas(const hardware::SystemSpec& system, const InferenceDeployment& d) {
  const int64_t per = std::max<int64_t>(1, d.tp * d.pp);
  return std::max<int64_t>(1, hardware::DeviceCount(system) / per);
}

ServingResult SimulateService(const InferenceEstimator& est, const InferenceDeployment& d,
                              std::vector<Request> requests) {
  const int64_t replicas = ServingReplicas(est.system(), d);
  if (replicas == 1) return SimulateServing(est, d, std::move(requests));
  return SimulateReplicas(est, d, requests, replicas);
}

double StudentT975(int df) {
  static constexpr double kT[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                    2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                    2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                    2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return 0;
  return df <= 30 ? kT[df - 1] : 1.960;
}

double FloorToThreeDigits(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x;
  const int e = static_cast<int>(std::floor(std::log10(x)));
  // Divide or multiply by an exact power of ten so that the result is the
  // double nearest the three-digit decimal (as strtod reads it back).
  const double digits = e - 2 >= 0 ? std::floor(x / std::pow(10.0, e - 2))
                                   : std::floor(x * std::pow(10.0, 2 - e));
  // log10 may land one off at an exact power of ten: keep three digits.
  double r = e - 2 >= 0 ? digits * std::pow(10.0, e - 2) : digits / std::pow(10.0, 2 - e);
  if (r > x) r = e - 2 >= 0 ? (digits - 1) * std::pow(10.0, e - 2) : (digits - 1) / std::pow(10.0, 2 - e);
  return r;
}

namespace {

// One seed's capacity: doubling from a tenth of what a lone request's
// latency allows, then bisection to 0.5 %. Returns false with `reason`
// when no rate meets the SLO or every rate does.
bool SeedCapacity(const InferenceEstimator& est, const InferenceDeployment& d, double lone,
                  int& simulations, double& rate, std::string& reason) {
  auto passes = [&](double r, ServingResult& out) {
    ++simulations;
    out = SimulateService(est, d, PoissonRequests(d, r));
    return out.feasible && out.slo_attainment >= d.slo_attainment;
  };
  double lo = 0.1 / lone, hi = 0;
  ServingResult r;
  int halvings = 0;
  while (!passes(lo, r)) {
    if (!r.feasible) {
      reason = r.reason;
      return false;
    }
    if (++halvings > 12) {
      reason = "even at " + base::FormatNumber(lo) + " requests/s the SLO is missed (TTFT p50 " +
               base::FormatQuantity(r.ttft_s.p50, base::Dimension::kTime) + ", TPOT p50 " +
               base::FormatQuantity(r.tpot_s.p50, base::Dimension::kTime) + ")";
      return false;
    }
    lo /= 2;
  }
  for (int i = 0; i < 40; ++i) {
    const double up = lo * 2;
    if (!passes(up, r)) {
      hi = up;
      break;
    }
    lo = up;
  }
  if (hi == 0) {
    reason = "the SLO is met at every rate tried (up to " + base::FormatNumber(lo) + " requests/s)";
    return false;
  }
  while ((hi - lo) > 0.005 * hi) {
    const double mid = 0.5 * (lo + hi);
    (passes(mid, r) ? lo : hi) = mid;
  }
  rate = lo;
  return true;
}

}  // namespace

RateSearch MaxRateMeetingSlo(const InferenceEstimator& est, const InferenceDeployment& d) {
  RateSearch s;
  if (d.slo_ttft <= 0 && d.slo_tpot <= 0) {
    s.reason = "no SLO: set inference.slo_ttft and/or inference.slo_tpot";
    return s;
  }
  InferenceDeployment one = d;
  one.batch = 1;
  one.speculate = 0;
  const double lone = est.Run(one).e2e_s;
  if (!(lone > 0)) {
    s.reason = "the deployment cannot run a single request";
    return s;
  }
  const int64_t n = std::max<int64_t>(1, d.rate_seeds);
  std::vector<InferenceDeployment> seeded(static_cast<size_t>(n), d);
  for (int64_t i = 0; i < n; ++i) {
    InferenceDeployment& di = seeded[static_cast<size_t>(i)];
    di.seed = d.seed + i;
    double r = 0;
    if (!SeedCapacity(est, di, lone, s.simulations, r, s.reason)) {
      if (n > 1) s.reason = "seed " + std::to_string(di.seed) + ": " + s.reason;
      return s;
    }
    s.seed_rates.push_back(r);
  }
  // Mean and 95 % confidence interval (Student's t, n - 1 degrees of freedom).
  double sum = 0, lowest = s.seed_rates.front();
  for (double r : s.seed_rates) {
    sum += r;
    lowest = std::min(lowest, r);
  }
  s.mean_rate = sum / static_cast<double>(n);
  double ss = 0;
  for (double r : s.seed_rates) ss += (r - s.mean_rate) * (r - s.mean_rate);
  const double half = n > 1 ? StudentT975(static_cast<int>(n - 1)) *
                                  std::sqrt(ss / static_cast<double>(n - 1)) /
                                  std::sqrt(static_cast<double>(n))
                            : 0.0;
  s.ci_low = s.mean_rate - half;
  s.ci_high = s.mean_rate + half;
  // The answer: checked, at the digits printed, on every seed.
  double rate = FloorToThreeDigits(std::min(lowest, s.ci_low > 0 ? s.ci_low : lowest));
  for (int step = 0; step < 400 && rate > 0; ++step) {
    bool all = true;
    ServingResult first;
    for (size_t i = 0; i < seeded.size() && all; ++i) {
      ++s.simulations;
      ServingResult r = SimulateService(est, seeded[i], PoissonRequests(seeded[i], rate));
      all = r.feasible && r.slo_attainment >= d.slo_attainment;
      if (i == 0) first = std::move(r);
    }
    if (all) {
      s.found = true;
      s.max_rate = rate;
      s.at_max = std::move(first);
      return s;
    }
    const double lower = FloorToThreeDigits(rate * 0.995);
    rate = lower < rate ? lower : FloorToThreeDigits(rate * 0.99);
  }
  s.reason = "no rate below the seeds' capacities met the SLO on every seed";
  return s;
}

}  // namespace orrery::engine
