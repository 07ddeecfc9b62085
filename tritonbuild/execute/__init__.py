"""Execute a Plan (edge): the build dir, the build strategies, develop, and the runs around them."""
