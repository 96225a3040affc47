#pragma once
// Reading probe output (probe_record.h writes it) back into records.

#include <string>
#include <vector>

#include "probe_record.h"

namespace orrery::calibration {

struct ProbeFile {
  ProbeHeader header;
  std::vector<ProbeRecord> records;
};

// Result of parsing: `ok` is false and `error` names the failing field (for
// example "records[3].median_s: expected a number") when the text is not a
// probe file of schema kProbeSchema. Never throws.
struct ProbeFileResult {
  bool ok = false;
  std::string error;
  ProbeFile file;
};

ProbeFileResult ParseProbeJson(const std::string& text);

// Reads and parses a file; an unreadable file is an error naming the path.
ProbeFileResult ReadProbeJsonFile(const std::string& path);

}  // namespace orrery::calibration
