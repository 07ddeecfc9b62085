#include <roctracer/roctracer.h>

namespace {
int versionOf() { return ROCTRACER_VERSION_MAJOR; } // the same name as Proton.cpp's: see there
} // namespace

int roctracerVersion() { return versionOf(); }
