from zkconsumer.cli import main

raise SystemExit(main())
