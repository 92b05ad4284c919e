#include <trainhook/flyte/deck.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

namespace trainhook::flyte {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string cell(const nlohmann::json& v) {
  if (v.is_number()) return number(v.get<double>());
  if (v.is_string()) return html_escape(v.get<std::string>());
  return html_escape(v.dump());
}

// Series worth charting: the training loss and every eval_* value except the
// timing ones.
bool charted(const std::string& key) {
  if (key == "loss") return true;
  if (key.rfind("eval_", 0) != 0) return false;
  return key != "eval_runtime" && key != "eval_samples_per_second" && key != "eval_steps_per_second";
}

std::string svg_chart(const std::string& key, const std::vector<std::pair<double, double>>& pts) {
  const double w = 360, h = 180, left = 56, right = 12, top = 24, bottom = 28;
  double x0 = pts.front().first, x1 = x0, y0 = pts.front().second, y1 = y0;
  for (auto& [x, y] : pts) {
    x0 = std::min(x0, x);
    x1 = std::max(x1, x);
    y0 = std::min(y0, y);
    y1 = std::max(y1, y);
  }
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (w - left - right); };
  auto py = [&](double y) { return top + (y1 - y) / (y1 - y0) * (h - top - bottom); };
  std::ostringstream s;
  s << "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
    << "\" viewBox=\"0 0 " << w << ' ' << h << "\" role=\"img\" aria-label=\"" << html_escape(key) << "\">\n"
    << "<text x=\"" << left << "\" y=\"16\" font-size=\"13\" font-weight=\"bold\">" << html_escape(key)
    << "</text>\n"
    << "<line x1=\"" << left << "\" y1=\"" << h - bottom << "\" x2=\"" << w - right << "\" y2=\""
    << h - bottom << "\" stroke=\"#888\"/>\n"
    << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << h - bottom
    << "\" stroke=\"#888\"/>\n"
    << "<text x=\"" << left - 4 << "\" y=\"" << top + 4 << "\" font-size=\"10\" text-anchor=\"end\">"
    << number(y1) << "</text>\n"
    << "<text x=\"" << left - 4 << "\" y=\"" << h - bottom << "\" font-size=\"10\" text-anchor=\"end\">"
    << number(y0) << "</text>\n"
    << "<text x=\"" << left << "\" y=\"" << h - 10 << "\" font-size=\"10\">step " << number(x0) << "</text>\n"
    << "<text x=\"" << w - right << "\" y=\"" << h - 10 << "\" font-size=\"10\" text-anchor=\"end\">step "
    << number(x1) << "</text>\n"
    << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
  for (size_t i = 0; i < pts.size(); ++i)
    s << (i ? " " : "") << number(px(pts[i].first)) << ',' << number(py(pts[i].second));
  s << "\"/>\n";
  for (auto& [x, y] : pts)
    s << "<circle cx=\"" << number(px(x)) << "\" cy=\"" << number(py(y))
      << "\" r=\"2.5\" fill=\"#1f77b4\"/>\n";
  s << "</svg>\n";
  return s.str();
}

}  // namespace

std::string html_escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_log_history_deck(const nlohmann::json& trainer_state, const std::string& title) {
  std::vector<nlohmann::json> rows;
  if (trainer_state.is_object() && trainer_state.contains("log_history") &&
      trainer_state["log_history"].is_array())
    for (const auto& r : trainer_state["log_history"])
      if (r.is_object()) rows.push_back(r);

  // Columns: step and epoch first, then the other keys as first seen (records
  // keep their keys sorted, as trainer_state.json does).
  std::vector<std::string> columns = {"step", "epoch"};
  for (const auto& r : rows)
    for (auto it = r.begin(); it != r.end(); ++it)
      if (std::find(columns.begin(), columns.end(), it.key()) == columns.end()) columns.push_back(it.key());

  std::map<std::string, std::vector<std::pair<double, double>>> series;
  std::vector<std::string> series_order;
  for (const auto& r : rows) {
    if (!r.contains("step") || !r["step"].is_number()) continue;
    for (auto it = r.begin(); it != r.end(); ++it) {
      if (!charted(it.key()) || !it.value().is_number() || !std::isfinite(it.value().get<double>())) continue;
      if (!series.count(it.key())) series_order.push_back(it.key());
      series[it.key()].emplace_back(r["step"].get<double>(), it.value().get<double>());
    }
  }

  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << html_escape(title)
    << "</title>\n<style>\n"
    << "body{font-family:sans-serif;margin:16px}table{border-collapse:collapse;font-size:12px}"
    << "th,td{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f0f0f0}"
    << ".charts{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:16px}\n"
    << "</style>\n</head>\n<body>\n<h2>" << html_escape(title) << "</h2>\n";
  if (rows.empty()) {
    s << "<p>The log history is empty.</p>\n";
  } else {
    s << "<div class=\"charts\">\n";
    for (const auto& key : series_order) s << svg_chart(key, series[key]);
    s << "</div>\n<table class=\"log-history\">\n<thead><tr>";
    for (const auto& c : columns) s << "<th>" << html_escape(c) << "</th>";
    s << "</tr></thead>\n<tbody>\n";
    for (const auto& r : rows) {
      s << "<tr>";
      for (const auto& c : columns) s << "<td>" << (r.contains(c) ? cell(r[c]) : "") << "</td>";
      s << "</tr>\n";
    }
    s << "</tbody>\n</table>\n";
  }
  s << "</body>\n</html>\n";
  return s.str();
}

}  // namespace trainhook::flyte
