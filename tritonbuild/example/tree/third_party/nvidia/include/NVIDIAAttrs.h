#pragma once
// Core sources include this header, so the core cannot be built without the nvidia tree.
#define TRITON_NVIDIA_WARP_SIZE 32
