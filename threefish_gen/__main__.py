from .cli import main

if __name__ == "__main__":      # not when multiprocessing imports it as __mp_main__ (verify/workers.py)
    main()
