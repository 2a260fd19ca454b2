"""An order-processing consumer: the application the example's migration tests run under every protocol."""
