// TrainerServices::log: what a plugin logs (e.g. the MLflow plugin naming the
// MLFLOW_TRACKING_URI it could not reach) never carries a URL's password
//, while other text passes unchanged.
#include <trainhook/trainer/trainer_services.hpp>

#include <trainhook/callbacks/callback_handler.hpp>

#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

using namespace trainhook;

TEST_CASE("a plugin's log line has URL passwords masked") {
  std::ostringstream out;
  auto logger =
      std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  TrainerState state;
  CallbackHandler handler;
  TrainerServices host({"out", "{}", "run", "mlp"}, state, handler);
  host.log(TH_LOG_WARN, "mlflow",
           "cannot reach MLFLOW_TRACKING_URI=http://alice:S3CRET@mlflow.example:5000 (connection refused)");
  host.log(TH_LOG_INFO, "tensorboard", "writing to /runs/x");
  spdlog::set_default_logger(previous);
  const std::string text = out.str();
  CHECK(text.find("S3CRET") == std::string::npos);
  CHECK(text.find("[mlflow] cannot reach MLFLOW_TRACKING_URI=http://alice:<PASSWORD>@mlflow.example:5000 "
                  "(connection refused)") != std::string::npos);
  CHECK(text.find("[tensorboard] writing to /runs/x") != std::string::npos);
}
