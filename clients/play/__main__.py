from clients.play.main import main

main()
