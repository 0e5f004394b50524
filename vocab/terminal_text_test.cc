#include "vocab/terminal_text.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace mla {
namespace {

TEST(TerminalText, PlainTextAndUtf8PassUnchanged) {
  EXPECT_EQ(EscapeControlBytes("lane lanes=2 chunk=4M"), "lane lanes=2 chunk=4M");
  EXPECT_EQ(EscapeControlBytes("H200 \xc3\xa9t\xc3\xa9 \xe2\x82\xac"), "H200 \xc3\xa9t\xc3\xa9 \xe2\x82\xac");
}

// Issue 15 item 9: an escape sequence in a variable reached the terminal raw.
TEST(TerminalText, CountOfSaysOneInTheSingular) {
  EXPECT_EQ(CountOf(1, "rank"), "1 rank");
  EXPECT_EQ(CountOf(2, "rank"), "2 ranks");
  EXPECT_EQ(CountOf(0, "rank"), "0 ranks");
  EXPECT_EQ(CountOf(1, "entry", "entries"), "1 entry");
  EXPECT_EQ(CountOf(3, "entry", "entries"), "3 entries");
}

TEST(TerminalText, EscapesControlBytes) {
  EXPECT_EQ(EscapeControlBytes("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(EscapeControlBytes("x\ny\tz\r"), "x\\ny\\tz\\r");
  EXPECT_EQ(EscapeControlBytes(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeControlBytes("\x7f"), "\\x7f");
}

TEST(TerminalText, EscapesC1ControlsAndBrokenUtf8) {
  EXPECT_EQ(EscapeControlBytes("\xc2\x9b"
                               "31m"),
            "\\u009b31m");                                           // CSI as UTF-8
  EXPECT_EQ(EscapeControlBytes("\x9b"), "\\x9b");                    // CSI as one byte
  EXPECT_EQ(EscapeControlBytes("\xe2\x82"), "\\xe2\\x82");           // cut short
  EXPECT_EQ(EscapeControlBytes("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

// The library's warnings quote variables: an escape sequence in
// MULTILANE_ALGO reaches stderr escaped.

// Issue 23 N14: a 100 KB value was echoed whole in a warning.
TEST(TerminalText, ExcerptKeepsShortValuesAndCutsLongOnes) {
  EXPECT_EQ(Excerpt("lane"), "lane");
  EXPECT_EQ(Excerpt(std::string(kExcerptBytes, 'a')), std::string(kExcerptBytes, 'a'));
  EXPECT_EQ(Excerpt(std::string(100000, 'a')), std::string(kExcerptBytes, 'a') + "\u2026 (100000 bytes)");
  EXPECT_EQ(Quoted("x"), "'x'");
}

// Issue 41 item 10: MULTILANE_OFF, the plugin's reason of up to
// kRelayedReasonBytes, is repeated whole; a longer value is cut there.
TEST(TerminalText, ExcerptTakesALargerBoundForRelayedReasons) {
  const std::string reason(kRelayedReasonBytes, 'r');
  EXPECT_EQ(Excerpt(reason, kRelayedReasonBytes), reason);
  EXPECT_EQ(Excerpt(std::string(100000, 'r'), kRelayedReasonBytes), reason + "\u2026 (100000 bytes)");
}

// Issue 41 item 10: `multilane report`'s summary keeps its own lines; a NUL
// is written out, never the end of the text; escaping again changes nothing.
TEST(TerminalText, EscapeCanKeepLineBreaks) {
  const std::string text("host a\0b\x1b[2J\nnext line\n", 23);
  const std::string kept = EscapeControlBytes(text, true);
  EXPECT_EQ(kept, "host a\\x00b\\x1b[2J\nnext line\n");
  EXPECT_EQ(EscapeControlBytes(kept, true), kept);
  EXPECT_EQ(EscapeControlBytes(text), "host a\\x00b\\x1b[2J\\nnext line\\n");
}

// Issue 41 item 10: an MPS control program's output reached stderr with its
// ESC bytes.
TEST(TerminalText, TerminalExcerptCutsAndEscapes) {
  EXPECT_EQ(TerminalExcerpt("\x1b[2Jboom\n"), "\\x1b[2Jboom\\n");
  EXPECT_EQ(TerminalExcerpt(std::string(100, '\x07')), [] {
    std::string s;
    for (size_t i = 0; i < kExcerptBytes; ++i) s += "\\x07";
    return s;
  }() + "\u2026 (100 bytes)");
}

TEST(TerminalText, ExcerptNeverSplitsAUtf8Character) {
  // 'e' then 2-byte characters: byte kExcerptBytes falls inside one of them.
  const std::string text = "e" + [] {
    std::string s;
    for (int i = 0; i < 100; ++i) s += "\xc3\xa9";
    return s;
  }();
  const std::string cut = Excerpt(text);
  EXPECT_EQ(cut.substr(0, kExcerptBytes - 1), text.substr(0, kExcerptBytes - 1));
  EXPECT_EQ(cut.substr(kExcerptBytes - 1, 3), "\u2026") << "the cut backs up to a whole character";
  EXPECT_EQ(EscapeControlBytes(cut), cut) << "valid UTF-8 throughout";
}

// A seqpacket socket keeps each write(2) a record of its own: one read
// returns exactly what one write sent, so a line written in pieces shows.
TEST(TerminalText, PrintLineWritesALongLineInOneWrite) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0);
  std::string text = "stats: rank 0:";
  while (text.size() < 700) text += " counter=" + std::to_string(text.size());
  ASSERT_TRUE(PrintLine(text + "\x01", fds[0]));
  char buf[4096];
  const ssize_t n = read(fds[1], buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "multilane: " + text + "\\x01\n");
  close(fds[0]);
  EXPECT_FALSE(PrintLine("to a closed socket", fds[0]));
  close(fds[1]);
}

}  // namespace
}  // namespace mla
