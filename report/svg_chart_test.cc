#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <string>

namespace mlreport {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SvgChart, EscapesText) { EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;"); }

// Issue 41 item 10: the page kept raw NUL and ESC bytes of a report's text.
TEST(SvgChart, EscapesControlBytes) {
  EXPECT_EQ(HtmlEscape(std::string("a\0b\x1b[1m<c>\xc2\x9b\x7f", 13)), "a\\x00b\\x1b[1m&lt;c&gt;\\u009b\\x7f");
}

TEST(SvgChart, StackedBarHasOneRectPerSegmentAndALegend) {
  const std::string svg = StackedBarSvg("t", {{"a", 0.5, "#111111"}, {"b", 0.5, "#222222"}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(Count(svg, "fill=\"#111111\""), 2u);  // the bar and its legend swatch
  EXPECT_EQ(Count(svg, "50 %"), 2u);
  EXPECT_EQ(svg.find("http"), std::string::npos);  // no xmlns needed inline
}

TEST(SvgChart, GroupedBarsSkipUnknownValues) {
  const std::string svg = GroupedBarsSvg("t", {"x", "y"}, {{"s", "#333333", {1.0, std::nullopt}, false}}, "GB/s");
  EXPECT_EQ(Count(svg, "fill=\"#333333\""), 2u);  // one bar, one legend swatch
}

TEST(SvgChart, LogScaleDrawsPositiveValuesOverTheirDecades) {
  const std::string svg =
      GroupedBarsSvg("t", {"x", "y", "z"}, {{"s", "#444444", {0.02, 300.0, 0.0}, false}}, "GB/s", true);
  EXPECT_NE(svg.find("(log scale)"), std::string::npos);
  EXPECT_EQ(Count(svg, "fill=\"#444444\""), 3u);  // 0 is not drawn on a log scale
  EXPECT_NE(svg.find(">0.01<"), std::string::npos);
  EXPECT_NE(svg.find(">1000<"), std::string::npos);
}

TEST(SvgChart, LineChartPlacesOnePointPerKnownValue) {
  const std::string svg = LineChartSvg("t", {1, 2, 4}, {"8", "16", "32"},
                                       {{"a", "#555555", {1.0, 1.5, std::nullopt}, true}}, "GPUs", "speedup");
  EXPECT_EQ(Count(svg, "<circle"), 2u);
  EXPECT_EQ(Count(svg, "stroke-dasharray"), 1u);
  EXPECT_NE(svg.find(">32<"), std::string::npos);
}

}  // namespace
}  // namespace mlreport
