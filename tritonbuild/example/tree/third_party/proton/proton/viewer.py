def main() -> None:
    print("proton-viewer")
