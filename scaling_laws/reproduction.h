#pragma once
// Reproduction of published scaling-law fits from data that Orrery may not
// redistribute (no licence upstream): Epoch AI's digitised Chinchilla Fig. 4
// points, the Llama 3 Fig. 2 IsoFLOP points, and reference values computed
// from published law parameters. The data live outside the tree (a research
// snapshot laid out as DIR/epoch_chinchilla/, DIR/llama3_isoflop/,
// DIR/reference/); `orrery validate --scaling-laws DIR` runs these checks and
// reports each against its published value. The unit tests of the fitters use
// only shipped or generated data.

#include <cstddef>
#include <string>
#include <vector>

#include "core/base/result.h"

namespace orrery::scaling_laws {

struct ReproductionCheck {
  std::string name;       // "epoch-240.huber.alpha"
  std::string reference;  // what `published` is, with its source
  double published = 0.0;
  double ours = 0.0;
  std::string rule;       // "within 0.5 %", "<= published x (1 + 1e-4)", ...
  bool pass = false;
};

struct ReproductionReport {
  std::string data_dir;
  std::vector<ReproductionCheck> checks;
  std::vector<std::string> missing;  // data files not found: their checks did not run
  size_t Failed() const;
  // Every check ran and passed.
  bool Passed() const { return Failed() == 0 && missing.empty(); }
};

struct ReproductionOptions {
  std::string catalog_path;         // published_laws.csv; empty: DefaultPresetCatalogPath()
  size_t bootstrap_resamples = 400; // 0 skips the bootstrap check
};

// Runs every check whose data are in `data_dir`. Errors: `data_dir` is not a
// directory, the preset catalogue does not load, a data file does not parse.
base::Result<ReproductionReport> ReproducePublishedFits(const std::string& data_dir,
                                                        const ReproductionOptions& options = {});

}  // namespace orrery::scaling_laws
