#pragma once
// Core sources include this header, so the core cannot be built without the amd tree.
#define TRITON_AMD_WAVE_SIZE 64
