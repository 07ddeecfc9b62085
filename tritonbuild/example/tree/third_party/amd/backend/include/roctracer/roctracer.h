/* Stand-in for the roctracer headers real trees keep in third_party/amd/backend/include (setup.py's default
   ROCTRACER_INCLUDE_DIR). */
#pragma once
#define ROCTRACER_VERSION_MAJOR 4
