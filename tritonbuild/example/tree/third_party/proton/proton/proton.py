def main() -> None:
    print("proton")
