// The tree itself: no file names a path of the machine it was written on, and
// every measured or datasheet row in validation/ keeps its source.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/csv.h"

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = ORRERY_TEST_SOURCE_DIR;

// Files under version control (`git ls-files`); without git, every file
// below the source directory except build trees and dot-folders.
std::vector<std::string> TrackedFiles() {
  std::vector<std::string> files;
  const std::string cmd = "git -C '" + kRoot.string() + "' ls-files -z 2>/dev/null";
  if (FILE* p = popen(cmd.c_str(), "r")) {
    std::string all;
    std::array<char, 4096> buf;
    size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) all.append(buf.data(), n);
    if (pclose(p) == 0) {
      std::istringstream in(all);
      for (std::string f; std::getline(in, f, '\0');)
        if (!f.empty()) files.push_back(f);
      return files;
    }
  }
  for (auto it = fs::recursive_directory_iterator(kRoot); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind('.', 0) == 0 || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(fs::relative(it->path(), kRoot).string());
  }
  return files;
}

// Where `line` names an absolute path of a machine: a home or scratch folder
// ("/" + "home/<user>/", "/" + "tmp/", ...) that starts the path, not one
// inside a relative path or a URL. Returns the offending text or empty.
std::string MachinePath(const std::string& line) {
  static const std::vector<std::string> kFolders = {"work", "root", "tmp", "home", "Users",
                                                    "scratch", "private/var"};
  for (const auto& folder : kFolders) {
    const std::string needle = "/" + folder + "/";
    for (size_t at = line.find(needle); at != std::string::npos; at = line.find(needle, at + 1)) {
      if (at > 0) {
        const char before = line[at - 1];
        if (std::isalnum(static_cast<unsigned char>(before)) ||
            std::string("_.~$/-{}").find(before) != std::string::npos)
          continue;  // part of a longer or relative path, a URL or a $VARIABLE
      }
      const size_t end = line.find_first_of(" \t\"'`),;:", at);
      return line.substr(at, end == std::string::npos ? std::string::npos : end - at);
    }
  }
  const size_t win = line.find(":\\Users\\");
  if (win != std::string::npos && win > 0) return line.substr(win - 1, 20);
  return {};
}

TEST(Tree, MachinePathDetection) {
  EXPECT_EQ(MachinePath("# Sources: /" "work/shared/validation/devices.csv row"),
            "/" "work/shared/validation/devices.csv");
  EXPECT_EQ(MachinePath("\"command_line\": \"/" "tmp/p --out /" "root/out/x.json\""),
            "/" "root/out/x.json");
  EXPECT_EQ(MachinePath("see /" "home/alice/notes.md"), "/" "home/alice/notes.md");
  EXPECT_EQ(MachinePath("C:\\Users\\bob\\x"), "C:\\Users\\bob\\x");
  EXPECT_EQ(MachinePath("relative ../" "work/x, URL https://x.org/" "tmp/y, $OUT/" "tmp/z"), "");
  EXPECT_EQ(MachinePath("hardware/network/" "work/x and network.md"), "");
}

TEST(Tree, NoFileNamesAPathOfTheMachineItWasWrittenOn) {
  const std::vector<std::string> files = TrackedFiles();
  ASSERT_GT(files.size(), 100u) << "no files found under " << kRoot;
  std::string found;
  for (const auto& rel : files) {
    std::ifstream in(kRoot / rel, std::ios::binary);
    if (!in) continue;  // deleted in the working tree but still in the index
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find('\0') != std::string::npos) continue;  // binary
    std::istringstream lines(text);
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      const std::string path = MachinePath(line);
      if (!path.empty()) found += rel + ":" + std::to_string(n) + ": " + path + "\n";
    }
  }
  EXPECT_EQ(found, "") << "absolute paths of a machine (cite the source, or write a path "
                          "relative to the repository):\n"
                       << found;
}

// validation/*.csv: every row names where its numbers come from.
TEST(Tree, EveryValidationRowKeepsItsSource) {
  int tables = 0;
  for (const auto& entry : fs::directory_iterator(kRoot / "validation")) {
    if (entry.path().extension() != ".csv") continue;
    ++tables;
    auto t = orrery::base::ReadCsvFile(entry.path().string());
    ASSERT_TRUE(t.ok()) << t.error().message;
    int col = t->ColumnIndex("source");
    if (col < 0) col = t->ColumnIndex("sources");
    ASSERT_GE(col, 0) << entry.path() << ": no source column";
    EXPECT_FALSE(t->rows.empty()) << entry.path();
    for (const auto& row : t->rows) {
      const std::string& s = row.cells[static_cast<size_t>(col)];
      EXPECT_NE(s.find_first_not_of(" \t"), std::string::npos)
          << "validation/" << entry.path().filename().string() << ":" << row.line
          << ": row without a source";
    }
  }
  EXPECT_GE(tables, 3);  // training_runs, inference_runs, devices
}

}  // namespace
