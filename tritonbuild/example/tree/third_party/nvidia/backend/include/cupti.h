/* Stand-in for CUPTI's header (real trees download it): proton's CMake looks for this file. */
#pragma once
#define CUPTI_API_VERSION 1
