from fastpad.cli import main

main()
