// The library's one exported symbol (trainhook_plugin_v1).
#include <trainhook/prometheus/prometheus_callback.hpp>

TRAINHOOK_PLUGIN("prometheus", "1.0.0",
                 trainhook::callback<trainhook::prometheus::PrometheusCallback>(
                     "prometheus", "1.0.0", trainhook::Kind::integration,
                     "Prometheus: /metrics on rank 0 and optional Pushgateway pushes (prometheus-cpp)"))
