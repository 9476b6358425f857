from staticvec.cli import main

raise SystemExit(main())
