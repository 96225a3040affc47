// Issue 20: inputs no parser should crash or hang on, each answered with a
// located message in bounded time and memory: non-UTF-8 bytes, byte-order
// marks, CRLF, tabs, duplicate keys, alias bombs, directories and devices
// given as files, oversized files; typed, range-checked CSV cells.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/base/csv.h"
#include "core/base/text_check.h"
#include "core/base/yaml_source.h"

namespace orrery::base {
namespace {

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::path(testing::TempDir()) /
                            ("orrery_base_" + std::to_string(getpid()) + "_" + name))
                               .string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(Utf8, AcceptsWellFormedTextAndFindsTheFirstBadByte) {
  EXPECT_EQ(FindInvalidUtf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("Stra\xC3\x9F" "e \xE2\x82\xAC \xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("ab\x8D"), 2u);                  // lone continuation byte
  EXPECT_EQ(FindInvalidUtf8("\xC0\xAF"), 0u);                // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("x\xED\xA0\x80"), 1u);           // UTF-16 surrogate U+D800
  EXPECT_EQ(FindInvalidUtf8("\xF4\x90\x80\x80"), 0u);        // above U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xE2\x82"), 0u);                // truncated sequence
  const TextPosition p = PositionOf("a\nbc\nd\x8D", 6);
  EXPECT_EQ(p.line, 3);
  EXPECT_EQ(p.column, 2);
}

// `estimate` and `infer` printed "[json.exception.type_error.316] invalid
// UTF-8 byte at index 2: 0x8D" for a scenario holding such a byte.
TEST(YamlInput, NonUtf8BytesAreALocatedError) {
  Diagnostics d;
  EXPECT_FALSE(ParseYamlText("scenario:\n  name: ab\x8D\n", "s.yaml", d));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].ToString(), "s.yaml:2:11: error: not UTF-8 text (invalid byte); save the file as "
                          "UTF-8 (got '0x8D')");
}

TEST(YamlInput, ByteOrderMarkAndCrlfAreAccepted) {
  Diagnostics d;
  auto root = ParseYamlText("\xEF\xBB\xBFmodel:\r\n  layers: 2\r\n", "m.yaml", d);
  ASSERT_TRUE(root) << d.ToString();
  EXPECT_EQ((*root)["model"]["layers"].Scalar(), "2");
}

TEST(YamlInput, TabIndentationIsALocatedSyntaxError) {
  Diagnostics d;
  EXPECT_FALSE(ParseYamlText("model:\n\tlayers: 2\n", "t.yaml", d));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].where.line, 2) << d.ToString();
  EXPECT_NE(d.ToString().find("t.yaml:2:"), std::string::npos) << d.ToString();
}

TEST(YamlInput, DuplicateKeysAreRefusedAtTheSecond) {
  Diagnostics d;
  EXPECT_FALSE(ParseYamlText("training:\n  tp: 8\n  pp: 2\n  tp: 4\n", "d.yaml", d));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].ToString(), "d.yaml:4:3: error: training.tp: duplicate key (first at line 2); keys "
                          "of one map must be unique (got 'tp')");
}

TEST(YamlInput, AliasBombStopsAtANodeBudget) {
  // Nine levels of nine aliases name the first list 9^9 (387 million) times.
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 9; ++k) text += ", " + prev;
    text += "]\n";
  }
  Diagnostics d;
  EXPECT_FALSE(ParseYamlText(text, "bomb.yaml", d));
  EXPECT_NE(d.ToString().find("bomb.yaml: error: more than 200000 YAML nodes once aliases are "
                              "expanded (an alias bomb?)"),
            std::string::npos)
      << d.ToString();
}

TEST(YamlInput, DirectoryDeviceAndOversizedFileAreRefused) {
  Diagnostics d;
  EXPECT_FALSE(LoadYamlFile(testing::TempDir(), d));
  EXPECT_NE(d.ToString().find("is a directory, not a YAML file"), std::string::npos) << d.ToString();
  Diagnostics z;
  EXPECT_FALSE(LoadYamlFile("/dev/zero", z));
  EXPECT_NE(z.ToString().find("/dev/zero: error: not a regular file"), std::string::npos)
      << z.ToString();
  Diagnostics big;
  EXPECT_FALSE(LoadYamlFile(TempFile("big.yaml", std::string(kMaxYamlBytes + 1, '#')), big));
  EXPECT_NE(big.ToString().find("file is larger than the 4 MiB a configuration may have"),
            std::string::npos)
      << big.ToString();
}

// `validate /dev/zero` grew to 2 GB.
TEST(CsvInput, DirectoryDeviceAndOversizedFileAreRefused) {
  auto dir = ReadCsvFile(testing::TempDir());
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find(": is a directory, not a CSV file"), std::string::npos);
  auto zero = ReadCsvFile("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "/dev/zero: not a regular file (a device or socket); give a CSV file");
  std::string text(kMaxCsvBytes + 1, '1');
  text[1] = '\n';
  auto big = ReadCsvFile(TempFile("big.csv", text));
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find(": larger than the 64 MiB a CSV file may have"),
            std::string::npos)
      << big.error().message;
}

TEST(CsvInput, ByteOrderMarkSkippedAndNonUtf8Located) {
  auto t = ParseCsv("\xEF\xBB\xBFmodel,tp\r\nx,8\r\n", "runs.csv");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->header[0], "model");
  EXPECT_EQ(t->rows[0].cells[1], "8");
  auto bad = ParseCsv("model,tp\nab\x8D,8\n", "runs.csv");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "runs.csv:2:3: not UTF-8 text (invalid byte 0x8D); save the file as UTF-8");
}

// A quote inside a quoted cell that was not doubled used to end the cell,
// drop itself and reopen quoting at the next one: four rows of the
// measured-runs CSV lost their quotes that way and their cells shifted under
// Python's csv module while this reader read them. RFC 4180's rule, with
// the place of the first bad quote.
TEST(CsvInput, QuotesFollowRfc4180WithTheirPlace) {
  auto ok = ParseCsv("model,notes\nx, \"a \"\"b\"\", c\" \n", "runs.csv");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->rows[0].cells[1], "a \"b\", c");
  auto inner = ParseCsv("model,notes\nx,\"see \"A section\" here\"\n", "runs.csv");
  ASSERT_FALSE(inner);
  // Column 8 (x , " s e e space ") is the quote before "A section": it closes the cell early.
  EXPECT_EQ(inner.error().message,
            "runs.csv:2:8: a double quote inside a quoted cell must be written twice (\"\"); this one "
            "ends the cell but is followed by text");
  auto bare = ParseCsv("model,notes\nx,ab\"c\n", "runs.csv");
  ASSERT_FALSE(bare);
  EXPECT_EQ(bare.error().message,
            "runs.csv:2:5: a double quote in an unquoted cell; quote the whole cell and write the quote "
            "twice (\"\")");
  auto open = ParseCsv("model,notes\nx,\"ab\n", "runs.csv");
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().message, "runs.csv:2: unterminated double quote");
}

// Measured-run cells were cast to integers unchecked: tp=0 and heads=0.5
// reached a division by zero (SIGFPE in `orrery validate`).
TEST(CsvInput, TypedCellsAreRangeCheckedWithTheirPlace) {
  auto t = ParseCsv("tp,heads,seq,global_batch,mfu\n0,0.5,-8,abc,\n8,1e2,2048,1536,41.5\n", "r.csv");
  ASSERT_TRUE(t) << t.error().message;
  const CsvRow& bad = t->rows[0];
  auto tp = CsvInteger(*t, bad, "tp", 1, 1000);
  ASSERT_FALSE(tp);
  EXPECT_EQ(tp.error().message, "r.csv:2: column 'tp': got '0': must be an integer in [1, 1000]");
  auto heads = CsvInteger(*t, bad, "heads", 1, 1000);
  ASSERT_FALSE(heads);
  EXPECT_EQ(heads.error().message, "r.csv:2: column 'heads': got '0.5': must be an integer in [1, 1000]");
  EXPECT_FALSE(CsvInteger(*t, bad, "seq", 1, 1 << 20));
  auto gb = CsvInteger(*t, bad, "global_batch", 1, 1 << 20);
  ASSERT_FALSE(gb);
  EXPECT_EQ(gb.error().message,
            "r.csv:2: column 'global_batch': got 'abc': must be an integer in [1, 1048576]");
  auto empty = CsvNumber(*t, bad, "mfu", 0, 100);
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->has_value());
  auto absent = CsvNumber(*t, bad, "no_such_column", 0, 100);
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->has_value());

  const CsvRow& good = t->rows[1];
  EXPECT_EQ(CsvInteger(*t, good, "tp", 1, 1000)->value(), 8);
  EXPECT_EQ(CsvInteger(*t, good, "heads", 1, 1000)->value(), 100);  // 1e2 is whole
  EXPECT_DOUBLE_EQ(CsvNumber(*t, good, "mfu", 0, 100)->value(), 41.5);
  auto high = CsvNumber(*t, good, "mfu", 0, 40);
  ASSERT_FALSE(high);
  EXPECT_EQ(high.error().message, "r.csv:3: column 'mfu': got '41.5': must be a number in [0, 40]");
}

}  // namespace
}  // namespace orrery::base
