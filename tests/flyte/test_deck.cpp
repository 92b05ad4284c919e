#include <trainhook/flyte/deck.hpp>

#include <doctest/doctest.h>

using namespace trainhook::flyte;

TEST_CASE("deck: a table of log_history and inline SVG charts, no external assets") {
  const auto state = nlohmann::json::parse(R"({
    "global_step": 20,
    "log_history": [
      {"loss": 2.5, "grad_norm": 1.0, "learning_rate": 0.001, "epoch": 0.5, "step": 10},
      {"eval_loss": 2.25, "eval_accuracy": 0.5, "eval_runtime": 1.5, "epoch": 0.5, "step": 10},
      {"loss": 1.5, "grad_norm": 0.5, "learning_rate": 0.0005, "epoch": 1.0, "step": 20},
      {"eval_loss": 1.75, "eval_accuracy": 0.75, "eval_runtime": 1.5, "epoch": 1.0, "step": 20},
      {"train_runtime": 3.0, "train_loss": 2.0, "note": "<b>&", "epoch": 1.0, "step": 20}
    ]})");
  const std::string html = render_log_history_deck(state, "Log history — run <1>");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("run &lt;1&gt;") != std::string::npos);
  CHECK(html.find("<th>step</th><th>epoch</th><th>grad_norm</th><th>learning_rate</th><th>loss</th>") !=
        std::string::npos);
  CHECK(html.find("<td>&lt;b&gt;&amp;</td>") != std::string::npos);  // escaped
  CHECK(html.find("aria-label=\"loss\"") != std::string::npos);
  CHECK(html.find("aria-label=\"eval_loss\"") != std::string::npos);
  CHECK(html.find("aria-label=\"eval_accuracy\"") != std::string::npos);
  CHECK(html.find("aria-label=\"eval_runtime\"") == std::string::npos);  // timings are not charted
  CHECK(html.find("aria-label=\"train_loss\"") == std::string::npos);
  CHECK(html.find("<polyline") != std::string::npos);
  size_t rows = 0;
  for (size_t p = html.find("<tr><td>"); p != std::string::npos; p = html.find("<tr><td>", p + 1)) ++rows;
  CHECK(rows == 5);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("2.5") != std::string::npos);
}

TEST_CASE("deck: an empty history still makes a valid page") {
  const std::string html = render_log_history_deck(nlohmann::json::object(), "t");
  CHECK(html.find("The log history is empty.") != std::string::npos);
  CHECK(html.find("</html>") != std::string::npos);
}
