// Names users write -> presets (PresetStore::Resolve), from the `name:` and
// `aliases:` the preset files declare.

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>

#include "core/base/yaml_source.h"
#include "core/estimate/scenario.h"

namespace orrery::engine {

struct PresetStore::Index {
  std::mutex mutex;
  std::array<std::optional<std::vector<Entry>>, 4> by_kind;  // DocKind order
};

PresetStore::PresetStore(std::string config_dir)
    : dir_(std::move(config_dir)), index_(std::make_shared<Index>()) {}

std::string NameKey(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

namespace {

// Trailing words of a model name that name a variant of the same shape:
// instruction or chat tuning, a converted checkpoint, a quantised one (with
// "KV" for a quantised KV cache: "FP8-KV"), a dated revision.
bool IsVariantWord(const std::string& key) {
  static const char* const kWords[] = {"instruct", "chat", "hf", "base", "it",
                                       "fp8", "fp4", "nvfp4", "mxfp4", "fp16", "bf16",
                                       "awq", "gptq", "int4", "int8", "w4a16", "w8a8",
                                       "w4a8", "dynamic", "quantized", "kv"};
  for (const char* w : kWords)
    if (key == w) return true;
  // A release date in four digits ("Qwen3-30B-A3B-Instruct-2507",
  // "DeepSeek-V2.5-1210"): a later checkpoint of the same shape.
  return key.size() == 4 && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Words of a name split at anything that is not a letter, digit or '.'
// ("Llama-3.1-8B-Instruct" -> Llama, 3.1, 8B, Instruct).
std::vector<std::string> Words(const std::string& name) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.') {
      cur += c;
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

const std::vector<PresetStore::Entry>& PresetStore::Entries(DocKind kind) const {
  const size_t k = static_cast<size_t>(kind);
  std::lock_guard<std::mutex> lock(index_->mutex);
  auto& slot = index_->by_kind[k];
  if (slot) return *slot;
  slot.emplace();
  for (const auto& preset : Names(kind)) {
    Entry e;
    e.preset = preset;
    e.spellings.push_back(preset);
    try {
      const YAML::Node root = YAML::LoadFile(PathOf(kind, preset));
      const YAML::Node map = root[DocKindName(kind)];
      if (map && map.IsMap()) {
        if (const YAML::Node n = map["name"]; n && n.IsScalar()) {
          e.spellings.push_back(n.Scalar());
          e.title = n.Scalar();
          const std::vector<std::string> words = Words(n.Scalar());
          // Only a word that is not the whole name ("H100" alone names the
          // device, not its maker).
          if (words.size() > 1) e.name_first_word = NameKey(words.front());
        }
        if (const YAML::Node a = map["aliases"]; a && a.IsSequence())
          for (const auto& s : a)
            if (s.IsScalar()) e.spellings.push_back(s.Scalar());
        if (const YAML::Node r = map["reference_system"]; r && r.IsScalar())
          e.reference_system = r.Scalar();
      }
    } catch (const YAML::Exception&) {
      // A broken preset answers to its file name only; loading it reports why.
    }
    slot->push_back(std::move(e));
  }
  return *slot;
}

std::optional<PresetName> PresetStore::Resolve(DocKind kind, const std::string& written) const {
  if (!PathOf(kind, written).empty()) return PresetName{written, written, ""};
  const auto& entries = Entries(kind);
  auto find = [&](const std::string& key) -> std::optional<PresetName> {
    if (key.empty()) return std::nullopt;
    for (const auto& e : entries)
      for (const auto& s : e.spellings)
        if (NameKey(s) == key) return PresetName{e.preset, s, ""};
    return std::nullopt;
  };
  if (auto hit = find(NameKey(written))) return hit;
  // The maker's word in front ("NVIDIA H100 80GB HBM3", "AMD Instinct
  // MI300X"): the rest, among the presets whose own name begins with it.
  if (const std::vector<std::string> words = Words(written); words.size() > 1) {
    const std::string first = NameKey(words.front());
    std::string rest;
    for (size_t i = 1; i < words.size(); ++i) rest += words[i];
    const std::string rest_key = NameKey(rest);
    for (const auto& e : entries) {
      if (first.empty() || e.name_first_word != first) continue;
      for (const auto& s : e.spellings)
        if (NameKey(s) == rest_key) return PresetName{e.preset, s, words.front()};
    }
  }
  if (kind != DocKind::kModel) return std::nullopt;
  // A name with its checkpoint's Hugging Face id in parentheses ("Llama 3.1
  // 70B (amd/Llama-3.1-70B-Instruct-FP8-KV)", as vendors' tables write it):
  // the id, which names the weights run, else the name before it. Other
  // words in parentheses ("GPT 1.7B (Megatron-LM README 2024)") are a
  // qualifier that may mean another model than the preset the name before
  // them answers to: such a name resolves whole or not at all.
  if (const size_t open = written.find('('); open != std::string::npos && open > 0) {
    const size_t close = written.find(')', open);
    const std::string inside =
        written.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
    if (inside.find('/') != std::string::npos) {
      if (auto hit = Resolve(kind, inside)) return hit;
      if (auto hit = Resolve(kind, written.substr(0, open))) return hit;
    }
  }
  // A Hugging Face id "org/name": the organisation does not change the model.
  std::string bare = written;
  if (const size_t slash = bare.rfind('/'); slash != std::string::npos) bare = bare.substr(slash + 1);
  if (auto hit = find(NameKey(bare))) return hit;
  // Drop trailing variant words one at a time, the longest match first.
  std::vector<std::string> words = Words(bare);
  std::string dropped;
  while (words.size() > 1 && IsVariantWord(NameKey(words.back()))) {
    dropped = words.back() + (dropped.empty() ? "" : " ") + dropped;
    words.pop_back();
    std::string joined;
    for (const auto& w : words) joined += w;
    if (auto hit = find(NameKey(joined))) {
      hit->dropped = dropped;
      return hit;
    }
  }
  return std::nullopt;
}

std::string PresetStore::CloseTo(DocKind kind, const std::string& written) const {
  const std::string key = NameKey(written);
  struct Near {
    size_t distance;
    std::string preset, spelling;
  };
  std::vector<Near> near;
  for (const auto& e : Entries(kind)) {
    Near best{std::string::npos, e.preset, ""};
    for (const auto& s : e.spellings) {
      const std::string k = NameKey(s);
      // Distance between the keys, with a name that contains the other (or
      // is contained) counted by the letters it adds.
      size_t d = base::EditDistance(key, k);
      if (!k.empty() && (key.find(k) != std::string::npos || k.find(key) != std::string::npos))
        d = std::min(d, key.size() > k.size() ? key.size() - k.size() : k.size() - key.size());
      if (d < best.distance) best = {d, e.preset, s};
    }
    near.push_back(best);
  }
  std::sort(near.begin(), near.end(),
            [](const Near& a, const Near& b) { return a.distance < b.distance; });
  // Near: within a quarter of the name's letters; the nearest (and any tie).
  const size_t limit = std::max<size_t>(1, key.size() / 4);
  if (near.empty() || near.front().distance > limit) {
    // A longer name around a preset's whole name ("NVIDIA H200", "H100
    // PCIe", "Llama 3 70B chat v2"): the preset it contains, the longest
    // contained spelling first (four letters at least, so "a100" counts and
    // "gpt" does not).
    std::optional<Near> around;
    size_t longest = 3;
    for (const auto& e : Entries(kind))
      for (const auto& s : e.spellings) {
        const std::string k = NameKey(s);
        if (k.size() > longest && key.find(k) != std::string::npos) {
          longest = k.size();
          around = Near{0, e.preset, s};
        }
      }
    if (around)
      return "did you mean '" + around->preset + "'" +
             (NameKey(around->spelling) != NameKey(around->preset) ? " (" + around->spelling + ")"
                                                                     : std::string()) +
             "?";
    // Nothing near by spelling: what people type is often the start or a
    // word of a preset's name ("llama3", "dgx-h100"); base::DidYouMean ranks those.
    std::vector<std::string> presets;
    for (const auto& e : Entries(kind)) presets.push_back(e.preset);
    return base::DidYouMean(written, presets);
  }
  std::string out = "did you mean ";
  // A name that every preset it begins ("A100" begins "A100 40GB" and "A100
  // 80GB") means more than the one a letter away ("H100"): those presets.
  std::vector<std::string> begun;
  if (key.size() >= 4)
    for (const auto& e : Entries(kind))
      for (const auto& s : e.spellings) {
        const std::string k = NameKey(s);
        if (k.size() > key.size() && k.compare(0, key.size(), key) == 0) {
          begun.push_back(e.preset);
          break;
        }
      }
  if (!begun.empty()) {
    for (size_t i = 0; i < begun.size() && i < 3; ++i) out += (i > 0 ? " or '" : "'") + begun[i] + "'";
    return out + "?";
  }
  int shown = 0;
  for (const auto& n : near) {
    if (n.distance > near.front().distance || shown == 3) break;
    if (shown > 0) out += " or ";
    out += "'" + n.preset + "'";
    if (NameKey(n.spelling) != NameKey(n.preset)) out += " (" + n.spelling + ")";
    ++shown;
  }
  return out + "?";
}

std::string PresetStore::Title(DocKind kind, const std::string& preset) const {
  for (const auto& e : Entries(kind))
    if (e.preset == preset) return e.title;
  return {};
}

std::string PresetStore::ReferenceSystem(const std::string& device_preset) const {
  for (const auto& e : Entries(DocKind::kDevice))
    if (e.preset == device_preset) return e.reference_system;
  return {};
}

const std::vector<std::string>& PresetNamingKeys(DocKind kind) {
  static const std::vector<std::string> device = {"aliases", "reference_system"};
  static const std::vector<std::string> other = {"aliases"};
  return kind == DocKind::kDevice ? device : other;
}

void CheckPresetNaming(const YAML::Node& map, DocKind kind, const std::string& path,
                       const std::string& file, base::Diagnostics& diags) {
  if (!map.IsMap()) return;
  if (const YAML::Node a = map["aliases"]) {
    if (!a.IsSequence()) {
      diags.Add(base::LocationOf(a, file), path + ".aliases", "",
                std::string("expected a sequence of names, e.g. [\"H100 SXM5 80GB\"], got a ") +
                    base::NodeKindName(a));
    } else {
      for (size_t i = 0; i < a.size(); ++i)
        if (!a[i].IsScalar() || NameKey(a[i].Scalar()).empty())
          diags.Add(base::LocationOf(a[i], file), path + ".aliases[" + std::to_string(i) + "]",
                    a[i].IsScalar() ? a[i].Scalar() : "",
                    "an alias must be a name with at least one letter or digit");
    }
  }
  if (kind == DocKind::kDevice)
    if (const YAML::Node r = map["reference_system"]; r && !r.IsScalar())
      diags.Add(base::LocationOf(r, file), path + ".reference_system", "",
                "expected a system preset name");
}

}  // namespace orrery::engine
