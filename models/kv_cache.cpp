#include "models/kv_cache.h"

#include <algorithm>

namespace orrery::models {

double KvElementsPerTokenPerLayer(const ModelSpec& m) {
  if (UsesLatentAttention(m))
    return static_cast<double>(m.kv_lora_rank + m.rope_head_dim);  // DeepSeek-V2 Table 1
  return 2.0 * static_cast<double>(KvHeads(m)) * static_cast<double>(HeadDim(m));
}

double KvBytesPerToken(const ModelSpec& m, double bytes_per_element) {
  return static_cast<double>(m.layers) * KvElementsPerTokenPerLayer(m) * bytes_per_element;
}

double KvElementsPerTokenPerLayerPerDevice(const ModelSpec& m, int64_t tp) {
  if (UsesLatentAttention(m) || tp <= 1) return KvElementsPerTokenPerLayer(m);
  // Heads split over tp, at least one per device (replicated when kv_heads < tp).
  const double heads = std::max(1.0, static_cast<double>(KvHeads(m)) / static_cast<double>(tp));
  return 2.0 * heads * static_cast<double>(HeadDim(m));
}

double KvBytesPerTokenPerDevice(const ModelSpec& m, double bytes_per_element, int64_t tp,
                                int64_t pp) {
  const int64_t stages = std::max<int64_t>(1, pp);
  const int64_t fullest_stage = (m.layers + stages - 1) / stages;  // ceil: the fullest stage
  const double layers = static_cast<double>(fullest_stage);
  return layers * KvElementsPerTokenPerLayerPerDevice(m, tp) * bytes_per_element;
}

}  // namespace orrery::models
