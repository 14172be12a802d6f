"""The Jupyter front end: the ``%%cep``/``%cep`` magics and the session behind them."""
