"""Words every screen shares: the keys on the footer, refusals, signing in and the command line."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    # Keys and buttons on more than one screen.
    "app.quit": {"ru": "Выход", "en": "Quit"},
    "app.back": {"ru": "Назад", "en": "Back"},
    "app.refresh": {"ru": "Обновить", "en": "Refresh"},
    "app.my_hands": {"ru": "Мои раздачи", "en": "My hands"},
    "app.sub_title": {"ru": "{player} @ лобби {address}", "en": "{player} @ lobby {address}"},
    # A refusal: the message is the services' (English) or, in Russian, the words of its reason.
    "error.refusal": {"ru": "{message} ({code}{reason})", "en": "{code}{reason}: {message}"},
    # Signing in.
    "signin.development_note": {
        "ru": "Вход для разработки: клиент выпускает токен игрока на введённое имя ключом из настроек "
        "(POKER_AUTH_KEYS), как это делает `mint-token`.",
        "en": "Development sign-in: the client mints a player token for the name you type with the "
        "configured key (POKER_AUTH_KEYS), as `mint-token` does.",
    },
    "signin.name_placeholder": {"ru": "ваше имя", "en": "your name"},
    "signin.production_note": {
        "ru": "Вход в рабочую среду: вставьте токен доступа, выданный вашим шлюзом.",
        "en": "Production sign-in: paste the bearer token your gateway gave you.",
    },
    "signin.token_placeholder": {"ru": "токен", "en": "token"},
    "signin.button": {"ru": "Войти", "en": "Sign in"},
    "signin.bad_name": {
        "ru": "имя - от 1 до 32 латинских букв, цифр, `.`, `_` или `-`, начинается с буквы или цифры "
        "(и не совпадает с именем службы или системы)",
        "en": "a name is 1 to 32 letters, digits, `.`, `_` or `-`, starting with a letter or digit "
        "(and not a service or system name)",
    },
    "signin.token_parts": {
        "ru": "токен состоит из трёх частей, разделённых точками",
        "en": "a token has three dot-separated parts",
    },
    "signin.token_unreadable": {"ru": "токен не читается", "en": "the token cannot be read"},
    "signin.token_no_player": {"ru": "в токене не указан игрок", "en": "the token names no player"},
    "signin.no_purchases": {
        "ru": "покупки проходят через платёжный шлюз; этот клиент не может их записать",
        "en": "purchases go through the payments gateway; this client cannot record them",
    },
    # The command line (`poker-play --help`).
    "cli.description": {
        "ru": "Покер в терминале против работающего кластера (по умолчанию - локального `make run`).",
        "en": "Play poker in the terminal against a running cluster (default: the local `make run`).",
    },
    "cli.usage": {"ru": "запуск: ", "en": "usage: "},
    "cli.options": {"ru": "параметры", "en": "options"},
    "cli.help": {"ru": "показать эту справку и выйти", "en": "show this help message and exit"},
    "cli.lobby": {"ru": "host:port лобби", "en": "host:port of the lobby"},
    "cli.cashier": {"ru": "host:port кассы", "en": "host:port of the cashier"},
    "cli.history": {"ru": "host:port службы истории", "en": "host:port of history"},
    "cli.fairness": {"ru": "host:port службы честности", "en": "host:port of fairness"},
    "cli.name": {
        "ru": "разработка: сразу войти под этим именем",
        "en": "development: sign in as this name at once",
    },
    "cli.token": {
        "ru": "рабочая среда: токен доступа для входа",
        "en": "production: the bearer token to sign in with",
    },
    "cli.lang": {
        "ru": "язык экранов: ru (русский) или en (английский); без флага - POKER_PLAY_LANG, затем локаль "
        "(LC_ALL, LC_MESSAGES, LANG: ru… - русский, другая - английский; не задана, C или POSIX - русский)",
        "en": "language of the screens: ru (Russian) or en (English); without it POKER_PLAY_LANG, then the "
        "locale (LC_ALL, LC_MESSAGES, LANG: ru… is Russian, another English; unset, C or POSIX: Russian)",
    },
}
