enum _NetworkLoggerPlaceholder {}
