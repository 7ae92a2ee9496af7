"""What a supervisor may do and how they are identified, for every channel they use (the console,
the page): the requests (`requests`), the PIN gate (`gate`) and its wrong-PIN book (`lockout`)."""
