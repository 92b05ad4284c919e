// The library's one exported symbol (trainhook_plugin_v1).
#include <trainhook/mlflow/mlflow_callback.hpp>

TRAINHOOK_PLUGIN("mlflow", "1.0.0",
                 trainhook::callback<trainhook::mlflow::MlflowCallback>(
                     "mlflow", "1.0.0", trainhook::Kind::integration,
                     "MLflow tracking over REST (async, retries, disk spool; MLFLOW_TRACKING_URI)"))
