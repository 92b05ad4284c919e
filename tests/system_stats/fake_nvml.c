/* A stand-in for libnvidia-ml.so.1 with two devices and fixed readings, so the
 * tests reach system_stats' NVML code on a machine without a driver. The
 * signatures are NVML's (nvml.h); device 1 fails its power reading. */
#include <stdint.h>

typedef struct {
  unsigned int gpu, memory;
} util_t;
typedef struct {
  unsigned long long total, free, used;
} mem_t;

static int initialised = 0;
int nvmlInit_v2(void) {
  initialised = 1;
  return 0;
}
int nvmlShutdown(void) {
  initialised = 0;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = 2;
  return initialised ? 0 : 1;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** dev) {
  *dev = (void*)(uintptr_t)(i + 1);
  return i < 2 ? 0 : 2;
}
int nvmlDeviceGetUtilizationRates(void* dev, util_t* u) {
  u->gpu = (unsigned)(uintptr_t)dev * 40;
  u->memory = 7;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* dev, mem_t* m) {
  m->total = 80ull << 30;
  m->used = (unsigned long long)(uintptr_t)dev << 30;
  m->free = m->total - m->used;
  return 0;
}
int nvmlDeviceGetPowerUsage(void* dev, unsigned int* mw) {
  if ((uintptr_t)dev == 2) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  *mw = 312500;
  return 0;
}
