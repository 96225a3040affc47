#pragma once
// Writing a device profile: the `device:` YAML document that `orrery check`
// and the scenario loader read (hardware/device_spec.h, ParseDevice), with
// every key of the device schema and the two efficiency curves, preceded by
// comment lines that say where the numbers come from.

#include <string>
#include <vector>

#include "hardware/device_spec.h"
#include "profile_fit.h"

namespace orrery::calibration {

// The profile as YAML text. Quantities carry units (4 significant digits, as
// base::FormatQuantity prints them); curve efficiencies keep 3 digits.
// `comments` become "# ..." lines above `device:`.
std::string DeviceProfileYaml(const hardware::DeviceSpec& device,
                              const std::vector<std::string>& comments);

// Where the profile's numbers come from, as comment lines: the probe run
// (device, host, date, command), the base profile, the fit's rules and how
// many records each curve summarises, and which keys are measured.
std::vector<std::string> DescribeFit(const FitResult& fit, const ProbeFile& probe,
                                     const std::string& probe_source,
                                     const std::string& base_description,
                                     const FitOptions& options);

// Writes `text` to `path`. Returns false and sets `error` on failure.
bool WriteTextFile(const std::string& path, const std::string& text, std::string* error);

}  // namespace orrery::calibration
