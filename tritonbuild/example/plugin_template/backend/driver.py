from triton.backends.driver import DriverBase


class PluginDriver(DriverBase):
    @staticmethod
    def is_active() -> bool:
        # Like triton-shared's CPU driver: never active by itself, users call driver.set_active().
        return False
