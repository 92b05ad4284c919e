// The metrics of a run, an evaluation or a prediction, by name: what
// eval_prediction.hpp's PredictionOutput carries and metrics_io.hpp prints and
// writes. Its own header so that a result type needs no metrics I/O.
#pragma once

#include <map>
#include <string>

namespace trainhook {

// Metric name -> value (sorted, as HF's json.dump(sort_keys=True) writes them).
using Metrics = std::map<std::string, double>;

}  // namespace trainhook
